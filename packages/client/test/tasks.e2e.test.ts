import {
  BadInput,
  JSONDescriptor,
  NDArray,
  NumpyNdarray,
  type ServerHandle,
  Service,
  serve,
} from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createClient, isTiffinClientError, type SseMessage, type TaskView } from '../src/index.js';

/** A service with task APIs, served for real; the client's `$task` against it. */
const svc = new Service('client-tasks')
  .api(
    { name: 'ramp', input: new JSONDescriptor(), output: new NumpyNdarray({ dtype: 'float32' }), task: true },
    async (input, ctx) => {
      const { n } = input as { n: number };
      for (let k = 1; k <= n; k++) {
        if (ctx.request.signal.aborted) throw new BadInput('stopped');
        ctx.progress(k, n);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return new NDArray(
        Float32Array.from({ length: n }, (_, i) => i / 2),
        [n],
        'float32',
      );
    },
  )
  .api({ name: 'plain', input: new JSONDescriptor(), output: new JSONDescriptor() }, (input) => input);

let handle: ServerHandle;
beforeAll(async () => {
  handle = await serve(svc, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
});
afterAll(async () => {
  await handle?.close();
});

async function until(status: () => Promise<TaskView>): Promise<TaskView> {
  for (;;) {
    const view = await status();
    if (['succeeded', 'failed', 'cancelled'].includes(view.status)) return view;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('client.$task', () => {
  it('submits, follows the events, and gets the answer decoded as the synchronous call decodes it', async () => {
    const client = createClient<typeof svc>({ baseUrl: handle.url });
    const ramp = client.$task('ramp');
    const id = await ramp.submit({ n: 3 });
    expectTypeOf(id).toEqualTypeOf<string>();
    const names: string[] = [];
    for await (const event of await ramp.events(id)) names.push((event as SseMessage).event);
    expect(names.at(-1)).toBe('done');
    expect((await until(() => ramp.status(id))).status).toBe('succeeded');
    const got = await ramp.get(id);
    expect(got).toEqual(await client.ramp({ n: 3 }));
    expect(got).toEqual([0, 0.5, 1]);
  });

  it('reports the server’s codes: 409 before done, 404 for an unknown id, usage for a non-task API', async () => {
    const client = createClient({ baseUrl: handle.url });
    const ramp = client.$task('ramp');
    const id = await ramp.submit({ n: 200 });
    await expect(ramp.get(id)).rejects.toMatchObject({ code: 'JOB_NOT_DONE' });
    expect((await ramp.cancel(id)).id).toBe(id);
    expect((await until(() => ramp.status(id))).status).toBe('cancelled');
    await expect(ramp.status('no such id ☃')).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' });
    const err = await client
      .$task('plain')
      .submit({})
      .catch((e: unknown) => e);
    expect(isTiffinClientError(err) && err.kind).toBe('usage');
  });
});
