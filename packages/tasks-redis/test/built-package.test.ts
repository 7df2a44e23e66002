import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeOnRedis } from './describe-on-redis.js';

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

const luaFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.lua'))
    .sort();

/** A request and an answer of `text`. */
const bytes = (text: string) => ({
  method: 'POST',
  url: '/api/submit',
  headers: [['content-type', 'text/plain']] as Array<[string, string]>,
  body: Buffer.from(text),
});

// The package as it is published: built by its own tsup config (into a folder of its own, not `dist`), so the Lua
// scripts its code reads at run time must be beside the bundle, as `files: ["dist"]` ships them.
describeOnRedis('the built package on a real redis-server', (redis) => {
  let out = '';
  let built: typeof import('../src/index.js');
  beforeAll(async () => {
    mkdirSync(join(PACKAGE, '.tmp'), { recursive: true });
    out = mkdtempSync(join(PACKAGE, '.tmp', 'dist-'));
    const tsup = join(
      dirname(createRequire(import.meta.url).resolve('tsup/package.json')),
      'dist',
      'cli-default.js',
    );
    await run(process.execPath, [tsup, '--out-dir', out, '--no-dts', '--no-sourcemap', '--silent'], {
      cwd: PACKAGE,
      timeout: 120_000,
    });
    built = (await import(pathToFileURL(join(out, 'index.js')).href)) as typeof built;
  }, 120_000);
  afterAll(() => {
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it('ships every Lua script beside its bundle, and runs tasks through each of them', async () => {
    const scripts = luaFiles(join(PACKAGE, 'src', 'commands'));
    expect(scripts).toContain('admit-10.lua');
    expect(luaFiles(join(out, 'commands'))).toEqual(scripts);

    const store = await built.RedisTaskStore.open({ url: redis.url, queue: 'built', leaseMs: 1000 });
    try {
      // admit-10, stats-2, view-5, start-4, keep-5, ended-10; then give-back-4 by a cancel while queued.
      const { id } = await store.submit('echo', bytes('hello'));
      expect((await store.stats()).unfinished).toEqual({ echo: { queued: 1, running: 0 } });
      expect(await store.status(id)).toMatchObject({ status: 'queued', queue_position: 1 });
      const task = await store.claim();
      expect(task?.request.body.toString()).toBe('hello');
      // An answer larger than its body is kept apart (keep-5); a smaller one would be written in the job.
      await store.complete(id, { status: 200, headers: [], body: Buffer.from('HELLO, WORLD') });
      expect((await store.result(id)).body.toString()).toBe('HELLO, WORLD');
      const queued = await store.submit('echo', bytes('later'));
      expect(await store.cancel(queued.id)).toMatchObject({ status: 'cancelled' });
    } finally {
      await store.close();
    }
  });
});
