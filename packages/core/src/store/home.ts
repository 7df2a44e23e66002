import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The root of all local stores: `$TIFFIN_HOME`, else `~/tiffin`. Read on every call so tests can switch it. */
export function tiffinHome(): string {
  const fromEnv = process.env.TIFFIN_HOME;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(homedir(), 'tiffin');
}

/**
 * Where models live. `TIFFIN_MODELS_DIR` wins over `$TIFFIN_HOME/models`: a deployable package sets it to
 * its own bundled `models/` folder, so a served package finds the models it was built with.
 */
export function modelsDir(): string {
  const fromEnv = process.env.TIFFIN_MODELS_DIR;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(tiffinHome(), 'models');
}

export function packagesDir(): string {
  return join(tiffinHome(), 'packages');
}
