import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findExecutable } from '../src/index.js';

/** What a docker client prints when its daemon is not running. */
export const DAEMON_DOWN =
  'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?';

/**
 * A stand-in for a container tool: a shell script on a private PATH. `info` exits with `info.exit` (after
 * printing `info.error`, or hanging when `info.hang`); `build` records its arguments, the Dockerfile it was
 * given and the members of any rootfs.tar in the context to `<bin>/<name>.log`, then fails with
 * `info.buildError` if given.
 */
export async function standInTool(
  bin: string,
  name: string,
  info: { exit?: number; error?: string; hang?: boolean; buildError?: string } = {},
): Promise<string> {
  await mkdir(bin, { recursive: true });
  const file = join(bin, name);
  // The stand-in runs on the private PATH: its one outside command is named by its full path.
  const sleep = info.hang ? await findExecutable('sleep') : null;
  await writeFile(
    file,
    `#!/bin/sh
log="${join(bin, `${name}.log`)}"
if [ "$1" = info ]; then
  ${sleep ? `exec ${sleep} 30` : ''}
  ${info.error ? `echo "${info.error}" >&2` : ''}
  exit ${info.exit ?? 0}
fi
echo "ARGS $*" >>"$log"
prev=""; for a in "$@"; do
  if [ "$prev" = -f ]; then cat "$a" >>"$log"; ctx=$(dirname "$a"); fi
  prev="$a"
done
[ -f "$ctx/rootfs.tar" ] && tar -tvf "$ctx/rootfs.tar" >>"$log"
[ -d "$ctx/node" ] && ls -l "$ctx/node/bin" >>"$log"
${info.buildError ? `echo "${info.buildError}" >&2; exit 1` : 'exit 0'}
`,
  );
  await chmod(file, 0o755);
  return file;
}
