import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleService } from '../src/bundle.js';

let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'tiffin-url-assets-'));
  await mkdir(join(work, 'project', 'src'), { recursive: true });
  await mkdir(join(work, 'project', 'model', 'shards'), { recursive: true });
  await writeFile(join(work, 'project', 'model', 'labels.txt'), 'setosa,versicolor,virginica');
  await writeFile(join(work, 'project', 'model', 'shards', 'w1.bin'), 'weights');
  // A helper module one folder down, as a service's src/ would have it.
  await writeFile(
    join(work, 'project', 'src', 'model.ts'),
    `import { readFileSync } from 'node:fs';
export const labels = (): string => readFileSync(new URL('../model/labels.txt', import.meta.url), 'utf8');
export const shard = (): string => readFileSync(new URL('shards/w1.bin', new URL("../model/", import.meta.url)), 'utf8');
export const missing = new URL('../model/not-there.onnx', import.meta.url).pathname;
export const remote = new URL('https://example.com/x.onnx').href;
`,
  );
  await writeFile(
    join(work, 'project', 'service.ts'),
    `import { labels, missing, remote, shard } from './src/model.js';
export default { labels: labels(), shard: shard(), missing, remote };
`,
  );
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe("bundleService: files reached by new URL('./…', import.meta.url) travel with the bundle", () => {
  it('copies files and folders under assets/ and rewrites the URLs; the bundle reads them from its new place', async () => {
    const outfile = join(work, 'package', 'v1', 'service.js');
    const result = await bundleService({
      file: join(work, 'project', 'service.ts'),
      exportName: 'default',
      outfile,
    });
    expect(result.assets).toEqual([
      join(work, 'project', 'model'),
      join(work, 'project', 'model', 'labels.txt'),
    ]);
    // The project folder is gone: only the package's copy can answer.
    await rm(join(work, 'project'), { recursive: true, force: true });
    const loaded = (await import(pathToFileURL(outfile).href)).default;
    expect(loaded.labels).toBe('setosa,versicolor,virginica');
    expect(loaded.shard).toBe('weights');
    // A URL naming no file is left as written, and so is one that is not relative.
    expect(loaded.missing).toMatch(/\/package\/model\/not-there\.onnx$/);
    expect(loaded.remote).toBe('https://example.com/x.onnx');
    expect(await readFile(outfile, 'utf8')).toContain('./assets/');
  });
});
