import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));

describe('process safety net', () => {
  it('logs errors that escape a request and keeps serving when the server owns the process', () => {
    const run = spawnSync(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', join(here, 'fixtures', 'stray-error-server.ts')],
      { cwd: join(here, '..', '..'), encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').pop()!) as { live: number; logged: string[] };
    expect(result.live).toBe(200);
    expect(result.logged).toEqual([
      'uncaught exception (the server keeps running)',
      'unhandled rejection (the server keeps running)',
    ]);
  });
});
