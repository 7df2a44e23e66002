import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from './packages.js';

const ROOT = join(import.meta.dirname, '..', '..');
const WORK = mkdtempSync(join(tmpdir(), 'tiffin-changesets-'));
afterAll(() => rmSync(WORK, { recursive: true, force: true }));

/** The workspace's manifests and pending changesets, copied so `changeset version` can run without touching the checkout. */
function copyManifests(): string[] {
  cpSync(join(ROOT, 'package.json'), join(WORK, 'package.json'));
  cpSync(join(ROOT, 'pnpm-workspace.yaml'), join(WORK, 'pnpm-workspace.yaml'));
  cpSync(join(ROOT, '.changeset'), join(WORK, '.changeset'), { recursive: true });
  const dirs = ['packages', 'examples'].flatMap((group) =>
    readdirSync(join(ROOT, group)).map((name) => join(group, name)),
  );
  for (const dir of [...dirs, 'bench']) {
    if (!existsSync(join(ROOT, dir, 'package.json'))) continue;
    mkdirSync(join(WORK, dir), { recursive: true });
    cpSync(join(ROOT, dir, 'package.json'), join(WORK, dir, 'package.json'));
  }
  return readdirSync(join(ROOT, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
}

function manifest(dir: string): { version: string; private?: boolean } {
  return JSON.parse(readFileSync(join(WORK, dir, 'package.json'), 'utf8'));
}

/** A dry run of the release step: every pending changeset parses, and versioning gives the bumps it asks for. */
describe('changeset version (dry run in a copy)', () => {
  it('consumes every pending changeset and bumps the published packages', async () => {
    const pending = copyManifests();
    const before = manifest('packages/core').version;
    const config = JSON.parse(readFileSync(join(ROOT, '.changeset', 'config.json'), 'utf8'));
    expect(config.access).toBe('public');

    await run(join(ROOT, 'node_modules', '.bin', 'changeset'), ['version'], { cwd: WORK, timeout: 60_000 });

    const left = readdirSync(join(WORK, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
    expect(left).toEqual([]);
    if (pending.length > 0) expect(manifest('packages/core').version).not.toBe(before);
    // A 0.x minor bump of core must not turn the optional peer (the client) into a 1.0.0 major.
    for (const name of readdirSync(join(WORK, 'packages'))) {
      const { version, private: isPrivate } = manifest(join('packages', name));
      if (!isPrivate) expect(version, name).toMatch(/^0\./);
    }
  });
});
