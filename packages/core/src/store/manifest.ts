import { readFile, writeFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';
import { CorruptedStoreEntry } from './errors.js';
import type { FileRecord } from './files.js';

export const MANIFEST_FILE = 'manifest.yaml';

/** Fields every store manifest has (models and packages). */
export interface BaseManifest {
  name: string;
  version: string;
  /** `name:version`, kept in the file so it reads on its own. */
  tag: string;
  /** Total bytes of the entry's files. */
  size: number;
  /** ISO 8601 time the entry was created. */
  creationTime: string;
  labels: Record<string, string>;
  files: FileRecord[];
}

export type FieldReader = {
  string(key: string): string;
  optionalString(key: string): string | undefined;
  number(key: string): number;
  record(key: string): Record<string, unknown>;
  stringRecord(key: string): Record<string, string>;
  array(key: string): unknown[];
};

/** Read a manifest file and hand a checked field reader to `build`; any problem becomes a CorruptedStoreEntry naming the file. */
export async function readManifest<M>(path: string, build: (fields: FieldReader) => M): Promise<M> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new CorruptedStoreEntry(
      `Manifest ${path} cannot be read (${(cause as Error).message}); delete the entry and save it again`,
      {
        cause,
      },
    );
  }
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (cause) {
    throw new CorruptedStoreEntry(
      `Manifest ${path} is not valid YAML (${(cause as Error).message.split('\n')[0]}); delete the entry and save it again`,
      {
        cause,
      },
    );
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new CorruptedStoreEntry(
      `Manifest ${path} is not a YAML mapping; delete the entry and save it again`,
    );
  }
  const obj = raw as Record<string, unknown>;
  const bad = (key: string, expected: string): never => {
    throw new CorruptedStoreEntry(
      `Manifest ${path} is invalid: field '${key}' must be ${expected}; delete the entry and save it again`,
    );
  };
  const isRecord = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v);
  const fields: FieldReader = {
    string: (key) =>
      typeof obj[key] === 'string' && obj[key] !== '' ? (obj[key] as string) : bad(key, 'a non-empty string'),
    optionalString: (key) =>
      obj[key] === undefined || typeof obj[key] === 'string'
        ? (obj[key] as string | undefined)
        : bad(key, 'a string'),
    number: (key) =>
      typeof obj[key] === 'number' && Number.isFinite(obj[key]) ? (obj[key] as number) : bad(key, 'a number'),
    record: (key) => (obj[key] === undefined ? {} : isRecord(obj[key]) ? obj[key] : bad(key, 'a mapping')),
    stringRecord: (key) => {
      const value =
        obj[key] === undefined ? {} : isRecord(obj[key]) ? obj[key] : bad(key, 'a mapping of strings');
      for (const v of Object.values(value)) if (typeof v !== 'string') bad(key, 'a mapping of strings');
      return value as Record<string, string>;
    },
    array: (key) => (obj[key] === undefined ? [] : Array.isArray(obj[key]) ? obj[key] : bad(key, 'a list')),
  };
  return build(fields);
}

/** The base fields, checked (shared by every kind's manifest reader). */
export function readBaseFields(fields: FieldReader, path: string): BaseManifest {
  const files = fields.array('files').map((item) => {
    const f = item as Partial<FileRecord> | null;
    if (!f || typeof f.path !== 'string' || typeof f.size !== 'number' || typeof f.sha256 !== 'string') {
      throw new CorruptedStoreEntry(
        `Manifest ${path} is invalid: every entry of 'files' needs path, size and sha256; delete the entry and save it again`,
      );
    }
    return { path: f.path, size: f.size, sha256: f.sha256 };
  });
  const base: BaseManifest = {
    name: fields.string('name'),
    version: fields.string('version'),
    tag: fields.string('tag'),
    size: fields.number('size'),
    creationTime: fields.string('creationTime'),
    labels: fields.stringRecord('labels'),
    files,
  };
  if (Number.isNaN(Date.parse(base.creationTime))) {
    throw new CorruptedStoreEntry(
      `Manifest ${path} is invalid: 'creationTime' is not a date; delete the entry and save it again`,
    );
  }
  return base;
}

export async function writeManifest(path: string, manifest: object): Promise<void> {
  await writeFile(path, stringify(manifest, { lineWidth: 0 }), 'utf8');
}
