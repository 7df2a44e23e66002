import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));

/** Run the fixture and return the `i` of each stdout line, in order. */
function linesOf(count: number, ending: string): number[] {
  const run = spawnSync(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      'tsx',
      join(here, 'fixtures', 'stdout-logger.ts'),
      String(count),
      ending,
    ],
    { cwd: join(here, '..', '..'), encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
  );
  expect(run.stderr).toBe('');
  return run.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const record = JSON.parse(line) as {
        level: string;
        time: string;
        msg: string;
        i: number;
        text?: string;
      };
      expect(record.level).toBe('info');
      expect(record.msg).toBe('line');
      expect(Number.isNaN(Date.parse(record.time))).toBe(false);
      // Every line whole (UTF-8 intact, lines longer than a batch too); the fixture's lone late line has none.
      if (record.text !== undefined)
        expect(record.text).toBe(record.i % 997 === 5 ? `${'x'.repeat(9000)}日本` : 'é ✓ 日本');
      return record.i;
    });
}

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

// The stdout logger gathers lines into batches (4 KiB or 50 ms) before writing: none may be lost or reordered.
// Each case starts a node process with tsx: slow on a loaded machine.
describe('default stdout logger', { timeout: 120_000 }, () => {
  it('writes every line, in order, when the process exits at once', () => {
    expect(linesOf(5000, 'exit')).toEqual(upTo(5000));
  });

  it('writes what was logged before flush() even when the process is then killed', () => {
    expect(linesOf(3, 'kill')).toEqual(upTo(3));
  });

  it('writes a lone line after a pause (the batch timer), and ends when the event loop is empty', () => {
    expect(linesOf(1, 'idle')).toEqual(upTo(2));
  });
});
