import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CollectedProcess, spawnTiffin } from './cli-process.js';

/**
 * `tiffin diffusion start demo --api-auth user:pass[,user:pass]`, as an A1111 client started with `--api-auth` meets
 * it: its users' Basic credentials open `/sdapi/v1/*`, anything else is a 401 with `WWW-Authenticate: Basic`; a
 * malformed flag stops the command without echoing the value.
 */
let proc: CollectedProcess;
let url = '';
const home = () => mkdtempSync(join(tmpdir(), 'tiffin-cli-home-'));

beforeAll(async () => {
  proc = spawnTiffin(['diffusion', 'start', 'demo', '--port', '0', '--api-auth', 'ann:s3cret,bo:pa:ss'], {
    TIFFIN_TF_BACKEND: 'onnxruntime',
    TIFFIN_HOME: home(),
  });
  url = await proc.url;
}, 120_000);

afterAll(async () => {
  proc?.child.kill('SIGTERM');
  await proc?.done;
});

const progress = (authorization?: string) =>
  fetch(`${url}/sdapi/v1/progress`, { headers: authorization ? { authorization } : {} });
const basic = (pair: string) => `Basic ${Buffer.from(pair).toString('base64')}`;

describe('tiffin diffusion start --api-auth', () => {
  it("opens A1111's routes for each user, and only for them", async () => {
    expect((await progress(basic('ann:s3cret'))).status).toBe(200);
    expect((await progress(basic('bo:pa:ss'))).status).toBe(200);
    for (const authorization of [undefined, basic('ann:wrong'), 'Basic ***']) {
      const res = await progress(authorization);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
      expect(await res.json()).toMatchObject({ error: 'UNAUTHORIZED', body: '', errors: '' });
    }
  });

  it('refuses a value that is no user:pass list, without printing it', async () => {
    const bad = spawnTiffin(['diffusion', 'start', 'demo', '--port', '0', '--api-auth', 'ann:ok,hunter2'], {
      TIFFIN_HOME: home(),
    });
    const exited = await bad.done;
    expect(exited.code).not.toBe(0);
    expect(exited.stderr).toMatch(/user:pass/);
    expect(exited.stderr).not.toContain('hunter2');
  });
});
