import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ImportServiceError, InvalidArgument, NotFound, Service } from '@tiffin/core/internal';

/** `path/to/service.ts[:exportName]`. */
export interface ServiceReference {
  /** Absolute path of the service file. */
  file: string;
  /** Export to use; undefined = default export, else `svc`. */
  exportName: string | undefined;
}

export function parseServiceReference(text: string): ServiceReference {
  const match = /^(.+?)(?::([A-Za-z_$][\w$]*))?$/.exec(text);
  if (!match?.[1])
    throw new InvalidArgument(`Invalid service reference '${text}': use path/to/service.ts[:exportName]`);
  return { file: resolve(match[1]), exportName: match[2] };
}

/** Loads a service module; the CLI passes one that can import TypeScript under plain Node. */
export type ServiceModuleLoader = (file: string) => Promise<Record<string, unknown>>;

export const importServiceModule: ServiceModuleLoader = (file) =>
  import(pathToFileURL(file).href) as Promise<Record<string, unknown>>;

/** Import the file and pick the Service: the named export, else the default export, else `svc`. */
export async function loadServiceReference(
  ref: ServiceReference,
  loader: ServiceModuleLoader = importServiceModule,
): Promise<{ service: Service; exportName: string }> {
  if (!(await stat(ref.file).catch(() => null))?.isFile())
    throw new NotFound(`Service file ${ref.file} not found`);
  let mod: Record<string, unknown>;
  try {
    mod = await loader(ref.file);
  } catch (cause) {
    throw new ImportServiceError(`Failed to import ${ref.file}: ${(cause as Error).message}`, { cause });
  }
  const candidates = ref.exportName !== undefined ? [ref.exportName] : ['default', 'svc'];
  for (const name of candidates) {
    if (isService(mod[name])) return { service: mod[name], exportName: name };
  }
  throw new ImportServiceError(
    ref.exportName !== undefined
      ? `${ref.file} has no Service exported as '${ref.exportName}'`
      : `${ref.file} exports no Service as its default export or as 'svc'`,
  );
}

// Duck-typed as well as instanceof: the file may import another copy of @tiffin/core.
function isService(value: unknown): value is Service {
  if (value instanceof Service) return true;
  const v = value as Partial<Service> | null;
  return (
    !!v &&
    typeof v === 'object' &&
    typeof v.name === 'string' &&
    v.apis instanceof Map &&
    Array.isArray(v.models)
  );
}
