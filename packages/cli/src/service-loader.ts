import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Service } from '@tiffin/core';
import { CLIException } from '@tiffin/core/internal';
import { describeLoadError } from './loader/load-errors.js';
import { registerServiceLoaders } from './loader/register.js';

export interface ServiceTarget {
  /** Absolute path of the service module. */
  file: string;
  /** Export to use; undefined = default export, else `svc`. */
  exportName: string | undefined;
}

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

/**
 * Imports a service module under plain Node, whatever its extension and module format and whatever folder
 * it is in (see loader/register.ts); errors say where, or what to install. `tiffin build` uses it too.
 */
export async function importServiceModule(file: string): Promise<Record<string, unknown>> {
  await registerServiceLoaders();
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new CLIException(`Could not load ${file}: ${describeLoadError(err, file)}`, { cause: err });
  }
  // TypeScript compiled to CommonJS (.cts) exports `exports.default`; import() wraps it as `default`.
  const wrapped = mod.default as { __esModule?: unknown } | null | undefined;
  if (typeof wrapped === 'object' && wrapped !== null && wrapped.__esModule === true)
    return wrapped as Record<string, unknown>;
  return mod;
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
  const mod = await importServiceModule(target.file);
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
