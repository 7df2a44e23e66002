/** How to start a thread on `entry`: a built `.js` directly, a `.ts` source through tsx's bootstrap. */
export function workerStart(entry: URL): { file: URL; execArgv: string[] } {
  if (!entry.pathname.endsWith('.ts')) return { file: entry, execArgv: [] };
  // From source: a bootstrap registers tsx, and workspace packages resolve to their sources.
  return { file: new URL('./worker-bootstrap.mjs', import.meta.url), execArgv: ['--conditions=source'] };
}
