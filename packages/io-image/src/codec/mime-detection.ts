import { MissingDependencyException } from '@tiffin/core/descriptor';

/** What content sniffing found: the MIME type and usual extension, from the file's magic bytes. */
export interface SniffedType {
  readonly mime: string;
  readonly ext: string;
}

type FileTypeModule = {
  fileTypeFromBuffer(buffer: Uint8Array | ArrayBuffer): Promise<SniffedType | undefined>;
};

/** Loads the `file-type` package; replaceable so a missing install can be simulated. */
export type FileTypeImporter = () => Promise<FileTypeModule>;

const defaultImporter: FileTypeImporter = () => import('file-type');

let cached: Promise<FileTypeModule> | undefined;

/**
 * `file-type` is loaded lazily: it is only needed when an image arrives, and a failed import is reported
 * as a MissingDependencyException naming the package, not as a crash at import time.
 */
export async function loadFileType(importer: FileTypeImporter = defaultImporter): Promise<FileTypeModule> {
  if (importer !== defaultImporter) return importModule(importer);
  cached ??= importModule(importer).catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}

async function importModule(importer: FileTypeImporter): Promise<FileTypeModule> {
  try {
    return await importer();
  } catch (err) {
    throw MissingDependencyException.forPackage('file-type', 'Image MIME type detection', err);
  }
}

/** The type of `bytes` from its content (magic bytes), or undefined when unrecognised. */
export async function sniffMimeType(
  bytes: Uint8Array,
  importer?: FileTypeImporter,
): Promise<SniffedType | undefined> {
  const fileType = await loadFileType(importer);
  const found = await fileType.fileTypeFromBuffer(bytes);
  return found ? { mime: found.mime, ext: found.ext } : undefined;
}
