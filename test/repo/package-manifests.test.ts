import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { publishedPackages } from './packages.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Manifest {
  exports: Record<string, unknown>;
  publishConfig?: { exports?: Record<string, unknown> };
  files?: string[];
}

function withoutSource(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([key]) => key !== 'source')
      .map(([key, v]) => [key, withoutSource(v)]),
  );
}

// `exports` carries the `source` condition (workspace packages resolve each other's TypeScript); what is
// published must not, since src/ is not in the tarball. pnpm pack takes `publishConfig.exports` instead.
describe('published package manifests', () => {
  it.each(publishedPackages(ROOT).map((p) => [p.name, p.dir]))(
    '%s publishes its exports without the source condition and without src/',
    (_name, dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
      expect(manifest.publishConfig?.exports).toEqual(withoutSource(manifest.exports));
      expect(manifest.files ?? []).not.toContain('src');
    },
  );
});
