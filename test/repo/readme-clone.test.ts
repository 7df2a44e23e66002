import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { codeBlocks, shellCommands, shellWords } from './markdown.js';
import { answers, freePort, readerEnv, ServerProcess } from './server-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const clones: string[] = [];
afterAll(async () => {
  await Promise.all(clones.map((dir) => rm(dir, { recursive: true, force: true })));
}, 180_000);

/** The request line run as written, or, where there is no curl, the same request through fetch. */
async function request(line: string, cwd: string): Promise<string> {
  const hasCurl = spawnSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).status === 0;
  if (hasCurl) {
    return execFileSync('sh', ['-c', line], {
      cwd,
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }
  const words = shellWords(line);
  const at = (flag: string) => words.flatMap((w, i) => (w === flag ? [words[i + 1]] : []));
  const headers = Object.fromEntries(
    at('-H').map((h) => [h.slice(0, h.indexOf(':')), h.slice(h.indexOf(':') + 1)]),
  );
  const url = words.find((w) => /^https?:\/\//.test(w));
  const res = await fetch(url!, { method: at('-X')[0] ?? 'GET', headers, body: at('-d')[0] });
  return res.text();
}

// The README's first block, run in a fresh `git clone` of this repository (what is committed): the install
// and start line as written, the request line, then Ctrl-C. The test line of the block is what runs this
// test, so it is not run again here. Only the port is changed (PORT, which `tiffin serve` reads), so that a
// server already on 3000 does not get in the way.
describe("README's first block in a fresh clone", () => {
  it('installs, starts, answers the request and stops on Ctrl-C', async () => {
    const clone = mkdtempSync(join(tmpdir(), 'tiffin-readme-'));
    clones.push(clone);
    execFileSync('git', ['clone', '--quiet', ROOT, clone], { timeout: 60_000 });
    const readme = readFileSync(join(clone, 'README.md'), 'utf8');
    const first = codeBlocks(readme).find((b) => b.lang === 'sh');
    expect(first).toBeDefined();
    const lines = shellCommands(first!.text);
    const startLine = lines.find(
      (l) => /\binstall\b/.test(l) && /\b(?:npm start|pnpm@[\d.]+ start)\b/.test(l),
    );
    const requestLine = lines.find((l) => l.startsWith('curl '));
    expect(startLine).toBeDefined();
    expect(requestLine).toBeDefined();
    expect(lines.filter((l) => l !== startLine && l !== requestLine).every((l) => / test$/.test(l))).toBe(
      true,
    );

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // Its own process group, as a terminal's foreground job: Ctrl-C is SIGINT to the whole group.
    const server = new ServerProcess('sh', ['-c', startLine!], {
      cwd: clone,
      detached: true,
      env: readerEnv({ PORT: String(port) }),
    });
    try {
      await server.ready(`${url}/readyz`, 240_000);
      const answer = await request(requestLine!.replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`), clone);
      const comment = first!.text.split('\n').find((l) => l.startsWith('curl '))!;
      const promised = /# .*: (\S+)\s*$/.exec(comment)?.[1];
      expect(JSON.parse(answer)).toEqual(JSON.parse(promised!));
      process.kill(-server.child.pid!, 'SIGINT');
      expect(await server.exitsWithin(30_000)).toBe(true);
      expect(await answers(`${url}/livez`)).toBe(false);
      expect(server.output).toContain('"msg":"shutting down"');
    } finally {
      server.kill();
    }
  }, 300_000);
});
