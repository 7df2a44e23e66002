/** Print a one-line error on stderr and set a failing exit code (no stack: it is the user's input). */
export function reportError(err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`tiffin: error: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exitCode = 1;
}
