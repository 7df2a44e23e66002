import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { create as createTar, extract as extractTar, Header } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFixed, writeLinear } from '../../onnx/test/fixtures/test-models.js';
import { type Exited, spawnTiffin } from './cli-process.js';

/**
 * Hostile archives given to `tiffin models import` as a user runs it: a manifest whose model file points outside
 * its store entry (the archive's checksums cover the files, not that name), and a small archive that declares a
 * huge member. Neither may serve a file from outside the store or fill the disk.
 */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tiffin-import-hostile-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const tiffin = (args: string[], home: string): Promise<Exited> =>
  spawnTiffin(args, { TIFFIN_HOME: home }).done;

/** Every file under `root`, relative, and their total size in bytes. */
async function tree(root: string): Promise<{ files: string[]; bytes: number }> {
  const files: string[] = [];
  let bytes = 0;
  const walk = async (at: string, rel: string): Promise<void> => {
    for (const e of await readdir(at, { withFileTypes: true }).catch(() => [])) {
      const path = join(at, e.name);
      if (e.isDirectory()) await walk(path, join(rel, e.name));
      else {
        files.push(join(rel, e.name));
        bytes += (await stat(path)).size;
      }
    }
  };
  await walk(root, '');
  return { files, bytes };
}

describe('tiffin models import of a hostile archive', () => {
  it('a manifest whose model file climbs out of the entry is never served (the planted file stays unread)', async () => {
    const source = join(dir, 'source');
    const saved = await tiffin(['models', 'import', writeLinear(dir), '--name', 'victim'], source);
    expect(saved.code).toBe(0);
    const archive = join(dir, 'victim.tar.gz');
    expect((await tiffin(['models', 'export', 'victim:latest', archive], source)).code).toBe(0);

    // Unpack, point the manifest's model file outside, pack again: the member checksums still hold.
    const unpacked = join(dir, 'unpacked');
    await mkdir(unpacked, { recursive: true });
    await extractTar({ file: archive, cwd: unpacked });
    const members = (await tree(unpacked)).files;
    const manifest = members.find((f) => f.endsWith('manifest.yaml'));
    expect(manifest).toBeDefined();
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere, { recursive: true });
    const planted = writeFixed(elsewhere, 'planted.onnx');
    const target = join(dir, 'target');
    for (const [k, file] of [
      '../../../../../elsewhere/planted.onnx', // outside-reads: ignore (a hostile manifest path to refuse)
      planted,
    ].entries()) {
      const text = await readFile(join(unpacked, manifest!), 'utf8');
      await writeFile(
        join(unpacked, manifest!),
        text.replace(/^(\s*file:\s*).*$/m, `$1${JSON.stringify(file)}`),
      );
      const hostile = join(dir, `hostile-${k}.tar.gz`);
      await createTar({ gzip: true, file: hostile, cwd: unpacked }, members);
      const imported = await tiffin(['models', 'import', hostile], target);
      if (imported.code !== 0) {
        // Refused at import: nothing stored.
        expect(imported.stderr).not.toContain(dir);
        continue;
      }
      // Stored: serving it must refuse before ready, naming the reason, and never run the planted model.
      const served = spawnTiffin(['serve', 'onnx:victim:latest', '--port', '0', '--instances', '1'], {
        TIFFIN_HOME: target,
      });
      await expect(served.url).rejects.toThrow(/exited/);
      const done = await served.done;
      expect(done.code).not.toBe(0);
      expect(done.stderr + done.stdout).toMatch(/outside its entry/);
      expect((await tiffin(['models', 'delete', 'victim:latest'], target)).code).toBe(0);
    }
  }, 120_000);

  it('a small archive declaring a 2 GiB member is refused before extracting; disk stays bounded', async () => {
    // A member whose header says 2 GiB, followed by 1 MiB of its zeros: a bomb cut short so the test stays small.
    const header = Buffer.alloc(512);
    new Header({ path: 'files/w.bin', mode: 0o644, size: 2 ** 31, type: 'File', mtime: new Date(0) }).encode(
      header,
    );
    const bomb = join(dir, 'bomb.tar.gz');
    await writeFile(bomb, gzipSync(Buffer.concat([header, Buffer.alloc(2 ** 20)])));
    const home = join(dir, 'bomb-home');
    const imported = await tiffin(['models', 'import', bomb], home);
    expect(imported.code).not.toBe(0);
    expect(imported.stderr).toMatch(/unpacks to more than/);
    // No stack to the user, and nothing left in the store (the staging folder included).
    expect(imported.stderr).not.toMatch(/^\s+at /m);
    const left = await tree(home);
    expect(left.bytes).toBeLessThan(2 ** 20);
    expect(left.files.filter((f) => f.endsWith('w.bin'))).toEqual([]);
    expect((await tiffin(['models', 'list', '--output', 'json'], home)).stdout.trim()).toBe('[]');
  }, 60_000);
});
