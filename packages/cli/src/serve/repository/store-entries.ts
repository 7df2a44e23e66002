import { ModelStore } from '@tiffin/core';
import { modelsDir } from '@tiffin/core/internal';
import { MODEL_NAME, type RepositoryEntry, type RepositoryScan } from './entries.js';

/** A store tag with its module, as `tiffin serve` takes one: `onnx:iris`, `onnx:iris:latest`, `tfjs:emotion:3`. */
export const STORE_TAG = /^(onnx|tfjs):([^:\s]+)(?::([^:\s]+))?$/;

/** Whether every argument is a store tag with its module (a repository of store entries). */
export function areStoreTags(specs: readonly string[]): boolean {
  return specs.length > 0 && specs.every((s) => STORE_TAG.test(s));
}

/**
 * The models of a repository made of store tags (docs/model-repository.md, "From the model store"): each tag's
 * entry under its store name, read from the store again at every scan, so a tag that names `latest` follows a
 * newer save (its fingerprint is the version it resolves to). A tag the store does not hold is listed with why.
 */
export function storeScan(tags: readonly string[], store = new ModelStore()): () => Promise<RepositoryScan> {
  return async () => {
    const entries = new Map<string, RepositoryEntry>();
    const refused = new Map<string, string>();
    for (const spec of tags) {
      const [, module, name, version] = STORE_TAG.exec(spec) as RegExpExecArray;
      const tag = `${name}:${version ?? 'latest'}`;
      if (!MODEL_NAME.test(name as string)) {
        refused.set(
          (name as string).slice(0, 64),
          'not a model name: 1-64 characters of A-Z, a-z, 0-9, ".", "_", "-"',
        );
        continue;
      }
      try {
        const entry = await store.get(tag);
        const { manifest } = entry;
        entries.set(manifest.name, {
          name: manifest.name,
          module: module as string,
          // The exact version found: a reload of `latest` takes the newest one saved since.
          source: manifest.tag,
          version: '',
          config: {},
          fingerprint: `${module}:${manifest.tag}`,
          bytes: manifest.size,
        });
      } catch (err) {
        refused.set(name as string, `not in the model store: ${(err as Error).message.split('\n')[0]}`);
      }
    }
    return { entries, refused };
  };
}

/** The folder `--model-control poll` watches for a store repository: the store's models. */
export const storeFolder = (): string => modelsDir();
