import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_DIR, type CollectedProcess, spawnTiffin } from './cli-process.js';

/**
 * The Python scripts of docs/a1111-api.md and docs/openai-images-api.md, run as a reader runs them: Debian's
 * python3 with `requests` (`.ci/run` installs python3-requests) against `tiffin diffusion start demo` with the
 * token the docs use, the docs' address the server's. Without python3 or requests this fails, never skips.
 */
const run = promisify(execFile);
const DOCS = join(CLI_DIR, '..', '..', 'docs');
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const TOKEN = 'my-token';

/** The ```python blocks of a document, in order. */
function pythonBlocks(doc: string): string[] {
  const markdown = readFileSync(join(DOCS, doc), 'utf8');
  const fence = /^```python(?:[ \t][^\n]*)?\n([\s\S]*?)^```$/gm;
  return [...markdown.matchAll(fence)].map((m) => m[1]!);
}

let proc: CollectedProcess;
let url = '';

beforeAll(async () => {
  proc = spawnTiffin(['diffusion', 'start', 'demo', '--port', '0'], {
    TIFFIN_TF_BACKEND: 'onnxruntime',
    TIFFIN_API_TOKEN: TOKEN,
    TIFFIN_HOME: mkdtempSync(join(tmpdir(), 'tiffin-cli-home-')),
  });
  url = await proc.url;
}, 120_000);

afterAll(async () => {
  proc?.child.kill('SIGTERM');
  await proc?.done;
});

/** A block run in a fresh folder (what it writes stays there), the docs' address replaced by the server's. */
async function runBlock(code: string): Promise<{ stdout: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tiffin-docs-python-'));
  const script = code.replaceAll('http://127.0.0.1:3000', url);
  const { stdout } = await run(PYTHON, ['-c', script], { cwd: dir, timeout: 120_000 });
  return { stdout, dir };
}

describe("the docs' Python scripts against tiffin diffusion start demo", () => {
  it('has python3 with requests to run them (.ci/run installs python3-requests)', async () => {
    const probe = await run(PYTHON, ['-c', 'import requests; print(requests.__version__)']).catch(
      (err: Error) => ({ stdout: '', error: err.message }),
    );
    expect(probe, `${PYTHON} with requests is needed to run the docs' scripts`).not.toHaveProperty('error');
  });

  it("runs docs/a1111-api.md's script: a PNG with its infotext, read back by png-info", async () => {
    const blocks = pythonBlocks('a1111-api.md');
    expect(blocks).toHaveLength(1);
    const { stdout, dir } = await runBlock(blocks[0]!);
    const [seedLine, infoLine] = stdout.trim().split('\n');
    const seed = Number(seedLine);
    expect(Number.isInteger(seed), stdout).toBe(true);
    // png-info gives back the sampler asked for and the seed that was drawn.
    expect(infoLine).toBe(`Euler a ${seed}`);
    const png = readFileSync(join(dir, 'out.png'));
    expect(await sharp(png).metadata()).toMatchObject({ format: 'png', width: 64, height: 64 });
  }, 120_000);

  it("runs docs/openai-images-api.md's script: a generation, then an edit of it", async () => {
    const blocks = pythonBlocks('openai-images-api.md');
    expect(blocks).toHaveLength(1);
    const { dir } = await runBlock(blocks[0]!);
    for (const file of ['circle.png', 'edited.png'])
      expect(await sharp(join(dir, file)).metadata(), file).toMatchObject({
        format: 'png',
        width: 64,
        height: 64,
      });
  }, 120_000);
});
