import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { NotFound } from '@tiffin/core';

/** One checkpoint a request may choose: its name (what the APIs list and take) and where it is on the server. */
export interface Checkpoint {
  /** The folder's or file's name in the models folder (the start model's own name for it). */
  name: string;
  /** Its absolute path: a diffusers folder or a single-file `.safetensors` checkpoint. Never sent to clients. */
  path: string;
}

/** The most entries one models folder lists (a folder of thousands is a mistake, not a catalog). */
export const MAX_CHECKPOINTS = 1024;
/** The longest name a request's choice is echoed with in an error. */
const MAX_ECHOED = 120;

/** A diffusers pipeline folder (it has a `model_index.json`) or a single-file `.safetensors` checkpoint. */
function isCheckpoint(path: string): boolean {
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) return existsSync(join(path, 'model_index.json'));
    return stat.isFile() && path.endsWith('.safetensors');
  } catch {
    return false;
  }
}

/** A request's model name as an error may echo it: bounded, printable ASCII only. */
export function echoedName(name: string): string {
  return JSON.stringify(name.slice(0, MAX_ECHOED).replace(/[^\x20-\x7e]/g, '?'));
}

/**
 * The checkpoints a diffusion service may generate with (`--models-dir`, as A1111's `--ckpt-dir`): the start model,
 * then every diffusers folder and single-file checkpoint directly in the folder. A request chooses one by name
 * only: a name is looked up among the entries listed, never joined to a path, so `../x`, an absolute path or any
 * other name that is not an entry finds nothing (`NOT_FOUND`) and nothing outside the folder is ever opened.
 */
/** A folder's modification time (its entries changed), or undefined when it cannot be read. */
function folderMtimeMs(dir: string): number | undefined {
  try {
    return statSync(dir).mtimeMs;
  } catch {
    return undefined;
  }
}

export class CheckpointCatalog {
  private entries: Checkpoint[] = [];
  /** The folder's mtime when it was last read: a name not found re-reads it only once the folder changed. */
  private readMtimeMs: number | undefined;

  /** `start`: the start model (the default); `dir`: the models folder, if any. */
  constructor(
    readonly start: Checkpoint,
    readonly dir: string | undefined,
  ) {
    this.refresh();
  }

  /** Whether requests may choose among several checkpoints (a models folder was given). */
  get selectable(): boolean {
    return this.dir !== undefined;
  }

  /** The start model first, then the folder's checkpoints by name. */
  list(): readonly Checkpoint[] {
    return this.entries;
  }

  /** Look at the folder again (A1111's `refresh-checkpoints`): added checkpoints join, removed ones leave. */
  refresh(): void {
    const found: Checkpoint[] = [this.start];
    if (this.dir !== undefined) {
      const dir = resolve(this.dir);
      let names: string[] = [];
      this.readMtimeMs = folderMtimeMs(dir);
      try {
        names = readdirSync(dir).sort();
      } catch {
        names = [];
      }
      for (const name of names) {
        if (found.length > MAX_CHECKPOINTS) break;
        const path = join(dir, name);
        if (name.startsWith('.') || path === this.start.path || !isCheckpoint(path)) continue;
        // A name already taken (the start model's) keeps its first owner.
        if (found.some((c) => c.name === name)) continue;
        found.push({ name, path });
      }
    }
    this.entries = found;
  }

  /** The checkpoint called `name` (its folder or file name; a single file also without `.safetensors`). */
  find(name: string): Checkpoint | undefined {
    const match = (c: Checkpoint) => c.name === name || c.name === `${name}.safetensors`;
    let found = this.entries.find(match);
    // One stat per unknown name, not a read of the whole folder: a client naming models that do not exist
    // costs the event loop little.
    if (
      !found &&
      this.dir !== undefined &&
      name.length <= 255 &&
      folderMtimeMs(resolve(this.dir)) !== this.readMtimeMs
    ) {
      this.refresh();
      found = this.entries.find(match);
    }
    return found;
  }

  /** The checkpoint a request names (null or absent: the start model's); an unknown name is a 404 `NOT_FOUND`. */
  resolve(name: string | null | undefined): Checkpoint {
    if (name === null || name === undefined || name === '') return this.start;
    const found = this.find(name);
    if (!found) {
      const some = this.entries.slice(0, 10).map((c) => JSON.stringify(c.name));
      const more = this.entries.length > some.length ? ', …' : '';
      throw new NotFound(
        `model ${echoedName(name)} not found: this service serves ${some.join(', ')}${more}`,
      );
    }
    return found;
  }
}

/** The start model as a catalog entry: its folder's (or file's) name and path. */
export function startCheckpoint(modelDir: string): Checkpoint {
  const path = resolve(modelDir);
  return { name: basename(path), path };
}
