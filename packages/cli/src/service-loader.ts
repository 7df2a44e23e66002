import { existsSync, statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLIException, type Service } from '@tiffin/core';

export interface ServiceTarget {
  /** Absolute path of the service module. */
  file: string;
  /** Export to use; undefined = default export, else `svc`. */
  exportName: string | undefined;
}

const TS_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.tsx']);

/** Parse `path/to/service.ts[:exportName]` relative to `cwd`. */
export function parseServiceTarget(spec: string, cwd: string = process.cwd()): ServiceTarget {
  const colon = spec.lastIndexOf(':');
  // A colon right after a drive letter (C:\...) is part of the path, not an export separator.
  const hasExport =
    colon > 1 && !spec.slice(colon + 1).includes('/') && !spec.slice(colon + 1).includes('\\');
  const path = hasExport ? spec.slice(0, colon) : spec;
  const exportName = hasExport ? spec.slice(colon + 1) : undefined;
  if (exportName !== undefined && !/^[A-Za-z_$][\w$]*$/.test(exportName)) {
    throw new CLIException(`Invalid export name '${exportName}' in '${spec}'`);
  }
  return { file: resolve(cwd, path), exportName };
}

/** The CLI runs from TypeScript sources (a TS loader is active) or from its build (then register tsx). */
async function ensureTypeScriptLoader(): Promise<void> {
  if (import.meta.url.endsWith('.ts')) return;
  const { register } = await import('tsx/esm/api');
  register();
}

function isService(value: unknown): value is Service {
  const v = value as Partial<Service> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.apis instanceof Map &&
    typeof v.startup === 'function' &&
    typeof v.name === 'string'
  );
}

/** Import a service module and pick its Service: the named export, else the default export, else `svc`. */
export async function loadService(target: ServiceTarget): Promise<Service> {
  if (!existsSync(target.file) || !statSync(target.file).isFile()) {
    throw new CLIException(`Service file not found: ${target.file}`);
  }
  if (TS_EXTENSIONS.has(extname(target.file))) await ensureTypeScriptLoader();
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(target.file).href)) as Record<string, unknown>;
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new CLIException(`Could not load ${target.file}: ${message}`, { cause: err });
  }
  const names = target.exportName ? [target.exportName] : ['default', 'svc'];
  for (const name of names) {
    if (!(name in mod)) continue;
    const value = mod[name];
    if (!isService(value)) {
      throw new CLIException(
        `Export '${name}' of ${target.file} is not a Service (create one with new Service(name))`,
      );
    }
    return value;
  }
  const wanted = target.exportName
    ? `no export named '${target.exportName}'`
    : "neither a default export nor an export named 'svc'";
  const available = Object.keys(mod).join(', ') || 'none';
  throw new CLIException(`${target.file} has ${wanted} (its exports: ${available})`);
}
