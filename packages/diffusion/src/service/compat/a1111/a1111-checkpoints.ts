import { UnprocessableEntity } from '@tiffin/core';
import { type Checkpoint, type CheckpointCatalog, echoedName } from '../../checkpoint-catalog.js';
import { type ServedModel, servedModel } from '../../model-hash.js';

/** A title's hash suffix as A1111 writes it (`name [0123456789]`). */
const TITLE_HASH = / \[[0-9a-f]{10}\]$/;

/**
 * The checkpoints as A1111's routes name them: by title (`file [hash]`), model name, file name, short hash or
 * SHA-256, as A1111's `checkpoint_aliases` take them. Names are matched first; a hash is looked for among the
 * checkpoints' hashes only when no name matched (each hashed once per process, see `modelHash`).
 */
export class A1111Checkpoints {
  constructor(private readonly catalog: CheckpointCatalog) {}

  /** The start model (A1111's checkpoint until `sd_model_checkpoint` names another). */
  get start(): Checkpoint {
    return this.catalog.start;
  }

  /** Every checkpoint with its A1111 name, title and hash (`/sdapi/v1/sd-models`), the folder looked at again. */
  async listed(): Promise<Array<ServedModel & { checkpoint: Checkpoint }>> {
    this.catalog.refresh();
    return Promise.all(
      this.catalog
        .list()
        .map(async (checkpoint) => ({ ...(await servedModel(checkpoint.path)), checkpoint })),
    );
  }

  /** The checkpoint `value` names, or a 422 (A1111's refusal of an unknown `sd_model_checkpoint`). */
  async find(value: unknown): Promise<Checkpoint> {
    const name = typeof value === 'string' ? value : String(value);
    const bare = name.replace(TITLE_HASH, '');
    const byName = this.catalog.find(bare);
    if (byName) return byName;
    if (/^[0-9a-f]{10}([0-9a-f]{54})?$/.test(name)) {
      for (const m of await this.listed())
        if (m.hash && (m.hash.short === name || m.hash.sha256 === name)) return m.checkpoint;
    }
    throw new UnprocessableEntity(`model ${echoedName(name)} not found (see GET /sdapi/v1/sd-models)`);
  }
}
