import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The command that adds a package in the reader's project: the manager running us, else its lockfile's. */
export function addPackageCommand(projectDir: string, pkg: string): string {
  const agent = process.env.npm_config_user_agent ?? '';
  if (agent.startsWith('pnpm/')) return `pnpm add ${pkg}`;
  if (agent.startsWith('yarn/')) return `yarn add ${pkg}`;
  if (agent.startsWith('npm/')) return `npm i ${pkg}`;
  for (let dir = projectDir; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'pnpm-lock.yaml'))) return `pnpm add ${pkg}`;
    if (existsSync(join(dir, 'yarn.lock'))) return `yarn add ${pkg}`;
    if (existsSync(join(dir, 'package-lock.json')) || dirname(dir) === dir) return `npm i ${pkg}`;
  }
}
