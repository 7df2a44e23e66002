import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import {
  copyFile,
  cp,
  mkdir,
  mkdtemp,
  readlink,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { InvalidArgument, TiffinError } from '@tiffin/core/internal';
import { create as createTar, type ReadEntry } from 'tar';
import { type ContainerTool, containerBuildArgs, runTool } from './container-tools.js';

/** Where the build's extra CA bundle goes in the base (npm in the image build trusts what this machine's Node does). */
const BUILD_CA_PATH = '/etc/ssl/certs/tiffin-build-ca.crt';

export interface RootfsBaseOptions {
  tool: ContainerTool;
  /** A root filesystem folder, e.g. from `debootstrap --variant=minbase bookworm <dir>`. */
  rootfs: string;
  path: string;
  report: (line: string) => void;
  /** Where the tool's output goes. */
  stdio: 'inherit' | 'pipe';
}

/**
 * Make a base image from a local root filesystem, with no registry: the folder (as a tar) is the only
 * layer, plus this machine's Node and npm when the folder has no Node of its own. The image is tagged
 * `localhost/tiffin-base-rootfs:<hash of the folder's path and Node version>` and returned.
 */
export async function buildRootfsBase(options: RootfsBaseOptions): Promise<string> {
  const rootfs = await realpath(options.rootfs).catch(() => {
    throw new InvalidArgument(`--base-rootfs ${options.rootfs}: no such folder`);
  });
  if (!(await isFileIn(rootfs, '/bin/sh')) && !(await isFileIn(rootfs, '/usr/bin/sh'))) {
    throw new InvalidArgument(
      `--base-rootfs ${options.rootfs} is not a root filesystem (no /bin/sh); make one with: debootstrap --variant=minbase bookworm ${options.rootfs}`,
    );
  }
  const hasNode =
    (await isFileIn(rootfs, '/usr/local/bin/node')) || (await isFileIn(rootfs, '/usr/bin/node'));
  const image = `localhost/tiffin-base-rootfs:${createHash('sha256')
    .update(`${rootfs}\0${hasNode ? '' : process.version}`)
    .digest('hex')
    .slice(0, 12)}`;
  const context = await mkdtemp(join(tmpdir(), 'tiffin-rootfs-base-'));
  try {
    const lines = ['FROM scratch', 'ADD rootfs.tar /'];
    await createTar(
      { file: join(context, 'rootfs.tar'), cwd: rootfs, portable: false, filter: keepInImage },
      ['.'],
    );
    if (!hasNode) {
      options.report(
        `adding this machine's Node ${process.version} and npm to the base (${rootfs} has none)`,
      );
      await stageHostNode(join(context, 'node'));
      lines.push('COPY node/ /usr/local/');
    }
    const ca = process.env.NODE_EXTRA_CA_CERTS;
    if (ca && (await isFile(ca))) {
      await copyFile(ca, join(context, 'build-ca.crt'));
      lines.push(`COPY build-ca.crt ${BUILD_CA_PATH}`, `ENV NODE_EXTRA_CA_CERTS=${BUILD_CA_PATH}`);
    }
    // FROM scratch has no PATH of its own.
    lines.push('ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
    await writeFile(join(context, 'Dockerfile'), `${lines.join('\n')}\n`);
    options.report(`building base image ${image} from ${rootfs}`);
    const args = containerBuildArgs(options.tool.backend, { contextDir: context, imageTag: image });
    await runTool(options.tool, args, options.path, options.stdio);
    return image;
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}

/**
 * Files, folders and links only; nothing below /proc, /sys or /dev (the runtime provides those), nor apt's
 * downloaded packages and package lists (about 80 MB in a minbase; `apt-get update` makes them again).
 */
function keepInImage(path: string, entry: Stats | ReadEntry): boolean {
  if (/^\.\/(proc|sys|dev|var\/cache\/apt|var\/lib\/apt\/lists)\/./.test(path)) return false;
  if (!('isFile' in entry)) return true; // only when reading archives, which this never does
  return entry.isFile() || entry.isDirectory() || entry.isSymbolicLink();
}

/** `<dir>/bin/node`, `<dir>/lib/node_modules/npm` and the npm/npx links, as under /usr/local. */
async function stageHostNode(dir: string): Promise<void> {
  const npm = join(dirname(dirname(process.execPath)), 'lib', 'node_modules', 'npm');
  if (!(await isFile(join(npm, 'bin', 'npm-cli.js')))) {
    throw new TiffinError(
      `npm not found next to this Node (${npm}); put Node and npm in the root filesystem, or use --base-image`,
    );
  }
  await mkdir(join(dir, 'bin'), { recursive: true });
  await copyFile(process.execPath, join(dir, 'bin', 'node'));
  await cp(npm, join(dir, 'lib', 'node_modules', 'npm'), { recursive: true, verbatimSymlinks: true });
  await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(dir, 'bin', 'npm'));
  await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(dir, 'bin', 'npx'));
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

/**
 * Whether `file` (absolute inside the root filesystem) is a file there. Links are followed inside the
 * root filesystem (an absolute `/usr/bin/node` link must not find this machine's Node); folder links on
 * the way (`/bin` → `usr/bin`) are relative in Debian and resolve in place.
 */
async function isFileIn(rootfs: string, file: string, depth = 0): Promise<boolean> {
  const at = join(rootfs, file);
  const target = await readlink(at).catch(() => null);
  if (target === null) return isFile(at);
  if (depth > 16) return false;
  return isFileIn(rootfs, target.startsWith('/') ? target : join(dirname(file), target), depth + 1);
}
