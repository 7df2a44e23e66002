import { homedir, tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Longest error message a client is sent, in characters (the log keeps the whole one). */
export const CLIENT_MESSAGE_LENGTH = 2000;

let roots: string[] | undefined;

/**
 * Folders whose absolute paths say something about the server: the working directory, the home and temp
 * folders, the Tiffin home and the folder `@tiffin/core` is installed in. Longest first, so the most specific
 * one is replaced.
 */
function serverRoots(): string[] {
  if (!roots) {
    const candidates = [process.cwd(), homedir(), tmpdir(), process.env.TIFFIN_HOME];
    // dist/index.js or src/errors/client-message.ts → the folder holding the package (node_modules or the repo).
    const here = fileURLToPath(import.meta.url);
    candidates.push(dirname(dirname(dirname(dirname(here)))));
    roots = [...new Set(candidates.filter((r): r is string => typeof r === 'string' && r.length > 1))].sort(
      (a, b) => b.length - a.length,
    );
  }
  return roots;
}

/**
 * An error message as it may leave the server: absolute paths under the server's own folders shortened to
 * `…/rest` and the length capped. The defence behind the rule that messages name no server paths: a message
 * built from a library's error (ENOENT on an absolute path) is covered too.
 */
export function clientMessage(message: string): string {
  let out = message;
  for (const root of serverRoots()) if (out.includes(root)) out = out.split(root).join('…');
  if (out.length > CLIENT_MESSAGE_LENGTH) out = `${out.slice(0, CLIENT_MESSAGE_LENGTH)}… (message cut)`;
  return out;
}
