import type { ServerHandle } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFrom, serveTiny, waitFor } from './compat-helpers.js';

/**
 * Each client owns its A1111 jobs: `/sdapi/v1/progress`, `/interrupt` and `/skip` act on the caller's own
 * generations (the caller: its client address and the credentials it sends), so client B neither sees client A's
 * progress and previews nor stops A's job. Two clients are two loopback addresses (127.0.0.1 and 127.0.0.2), or one
 * address with and without Basic credentials of its own.
 */
const A = '127.0.0.1';
const B = '127.0.0.2';
let handle: ServerHandle;

beforeAll(async () => {
  handle = await serveTiny();
}, 120_000);

afterAll(async () => {
  await handle?.close();
});

interface Progress {
  progress: number;
  state: {
    job_count: number;
    job_no: number;
    sampling_step: number;
    sampling_steps: number;
    skipped: boolean;
  };
  current_image: string | null;
}

interface Generated {
  images: string[];
  info: string;
}

const progressOf = (from: string, headers?: Record<string, string>) =>
  callFrom<Progress>(handle, from, 'GET', '/sdapi/v1/progress', undefined, headers);

/** `from`'s txt2img of `n_iter` 32×32 images in 30 steps each (long enough to watch and stop). */
const generate = (from: string, prompt: string, n_iter: number, seed: number) =>
  callFrom<Generated>(handle, from, 'POST', '/sdapi/v1/txt2img', {
    prompt,
    steps: 30,
    n_iter,
    width: 32,
    height: 32,
    seed,
  });

/** An A1111 client's `--api-auth` credentials (user `other`, password `secret`). */
const OTHER_USER = { authorization: `Basic ${Buffer.from('other:secret').toString('base64')}` };

/** Waits until `from`'s own progress shows its generation `no` under way (a step done, with a preview). */
async function underWay(from: string, no: number): Promise<Progress> {
  let seen: Progress | undefined;
  await waitFor(async () => {
    const p = (await progressOf(from)).body;
    if (p.state.job_no === no && p.state.sampling_step > 0 && p.current_image !== null) seen = p;
    return seen !== undefined;
  });
  return seen as Progress;
}

describe("A1111's progress, interrupt and skip", () => {
  it("show another caller nothing of A's job and do not stop it", async () => {
    const job = generate(A, 'a green triangle', 4, 1);
    const mine = await underWay(A, 0);
    expect(mine.progress).toBeGreaterThan(0);
    expect(mine.state.job_count).toBe(4);

    // B: the idle state, no preview; B's interrupt and skip find no job of B's.
    const theirs = await progressOf(B);
    expect(theirs.status).toBe(200);
    expect(theirs.body.current_image).toBeNull();
    expect(theirs.body).toMatchObject({
      progress: 0,
      state: { job_count: 0, sampling_step: 0, sampling_steps: 0 },
    });
    expect((await callFrom(handle, B, 'POST', '/sdapi/v1/interrupt', {})).status).toBe(200);
    expect((await callFrom(handle, B, 'POST', '/sdapi/v1/skip', {})).status).toBe(200);
    // The same from A's address with credentials of another user.
    expect((await progressOf(A, OTHER_USER)).body).toMatchObject({ progress: 0, current_image: null });
    const post = (path: string) => callFrom(handle, A, 'POST', path, {}, OTHER_USER);
    expect((await post('/sdapi/v1/interrupt')).status).toBe(200);
    expect((await post('/sdapi/v1/skip')).status).toBe(200);
    // A's own view is unchanged: its job runs on, not interrupted.
    expect((await progressOf(A)).body.state.job_count).toBe(4);

    const answer = await job;
    expect(answer.status).toBe(200);
    expect(answer.body.images).toHaveLength(4);
    expect((await progressOf(A)).body.state.job_count).toBe(0);
  }, 180_000);

  it('let the caller skip its own current generation, and no other caller', async () => {
    const job = generate(B, 'a blue square', 3, 5);
    await underWay(B, 0);
    // A's skip and interrupt do nothing to B's job.
    expect((await callFrom(handle, A, 'POST', '/sdapi/v1/skip', {})).status).toBe(200);
    expect((await callFrom(handle, A, 'POST', '/sdapi/v1/interrupt', {})).status).toBe(200);
    expect((await callFrom(handle, B, 'POST', '/sdapi/v1/skip', {})).status).toBe(200);
    const answer = await job;
    expect(answer.status).toBe(200);
    // Generation 0 was skipped (no image), the job went on with generations 1 and 2.
    expect(answer.body.images).toHaveLength(2);
    expect((JSON.parse(answer.body.info) as { all_seeds: number[] }).all_seeds).toEqual([6, 7]);
    expect((await progressOf(B)).body.state.job_count).toBe(0);
  }, 180_000);
});
