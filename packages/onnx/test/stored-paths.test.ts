import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelStore } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel, saveModel } from '../src/index.js';
import { writeFixed, writeLinear } from './fixtures/test-models.js';

/*
 * A store entry's manifest may come from an imported archive, whose sha256 check covers the listed files but not
 * what the manifest says the model file is: that name must stay inside the entry.
 */

let dir: string;
let store: ModelStore;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tiffin-onnx-paths-'));
  store = new ModelStore(join(dir, 'store'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Point the stored manifest's model file at `file`, as a hand-edited archive would. */
function retarget(manifestPath: string, file: string): void {
  const text = readFileSync(manifestPath, 'utf8');
  writeFileSync(manifestPath, text.replace(/^(\s*file:\s*).*$/m, `$1${JSON.stringify(file)}`));
}

describe('a stored model file is always one of the entry’s own files', () => {
  it('refuses a manifest whose model file climbs out of the entry, and never opens the planted file', async () => {
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    writeFixed(elsewhere, 'planted.onnx');
    const tag = await saveModel('victim', writeLinear(dir), { store });
    const entry = await store.get(tag);
    for (const file of [
      '../../../../elsewhere/planted.onnx', // outside-reads: ignore (a hostile manifest path the store must refuse)
      join(elsewhere, 'planted.onnx'),
      'a/../../x.onnx',
    ]) {
      retarget(join(entry.path, 'manifest.yaml'), file);
      await expect(loadModel(tag, { store, instances: 1 })).rejects.toThrow(/outside its entry/);
    }
  });

  it('refuses a model file that is a symbolic link leading out of the entry', async () => {
    const tag = await saveModel('linked', writeLinear(dir, 'linked.onnx'), { store });
    const entry = await store.get(tag);
    const inside = join(entry.filesPath, 'linked.onnx');
    unlinkSync(inside);
    symlinkSync(writeFixed(dir, 'outside.onnx'), inside);
    await expect(loadModel(tag, { store, instances: 1 })).rejects.toThrow(/symbolic link/);
  });
});
