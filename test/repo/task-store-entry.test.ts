import { fileURLToPath } from 'node:url';
import { MemoryTaskStore, TaskNotFound } from '@tiffin/core/tasks';
import { describeTaskStore } from '@tiffin/core/testing';
import { describe, expect, it } from 'vitest';
import { run } from './packages.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// A store of one's own as its package's tests would check it: the contract and the suite by package name, as
// built (this project resolves `@tiffin/core` through its exports to `dist`, not the `source` condition).
describeTaskStore(
  'MemoryTaskStore from the built @tiffin/core/tasks',
  (limits) => new MemoryTaskStore(limits),
);

/**
 * What a Node process loads for `entries`, in order, with every import of vitest refused: `ok`, or the message of
 * the first import that failed.
 */
async function loadWithoutVitest(entries: string[]): Promise<string> {
  const hook = `export async function resolve(specifier, context, next) {
    if (/^(vitest|@vitest\\/)/.test(specifier)) throw new Error('vitest was imported: ' + specifier);
    return next(specifier, context);
  }`;
  const script = `
    import { register } from 'node:module';
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
    try {
      for (const entry of ${JSON.stringify(entries)}) await import(entry);
      console.log('ok');
    } catch (e) { console.log(e.message); }`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
  return stdout.trim();
}

describe('@tiffin/core/tasks and @tiffin/core/testing by package name', () => {
  it('resolve to the built entries', async () => {
    const script = `for (const entry of ['@tiffin/core/tasks', '@tiffin/core/testing']) console.log(import.meta.resolve(entry));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
    expect(stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/\/packages\/core\/dist\/tasks\.js$/),
      expect.stringMatching(/\/packages\/core\/dist\/testing\.js$/),
    ]);
    expect(new TaskNotFound('x').toBody().code).toBe('JOB_NOT_FOUND');
  });

  it('a service that imports @tiffin/core (and the contract) never loads vitest; the suite does', async () => {
    expect(await loadWithoutVitest(['@tiffin/core', '@tiffin/core/tasks', '@tiffin/core/descriptor'])).toBe(
      'ok',
    );
    // The refusal works: the suite's entry is the one that imports vitest.
    expect(await loadWithoutVitest(['@tiffin/core/testing'])).toBe('vitest was imported: vitest');
  });
});
