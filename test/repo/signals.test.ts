import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pnpmScript } from './packages.js';
import { answers, freePort, readerEnv, ServerProcess } from './server-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function stopsOn(
  signal: NodeJS.Signals,
  command: string,
  args: string[],
  cwd = ROOT,
): Promise<{ stopped: boolean; output: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = new ServerProcess(command, args, { cwd, env: readerEnv({ PORT: String(port) }) });
  try {
    await server.ready(`${url}/readyz`, 120_000);
    server.child.kill(signal); // the process the reader started, not the server under it
    const exited = await server.exitsWithin(30_000);
    // The outer process may exit before the server under it has drained: give that a moment.
    const deadline = Date.now() + 20_000;
    while ((await answers(`${url}/livez`)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 300)); // the last log lines, written as it exits
    return { stopped: exited && !(await answers(`${url}/livez`)), output: server.output };
  } finally {
    server.kill();
  }
}

// The server sits under package-manager processes; a signal to the outermost one must reach it, or the
// server outlives the command that started it.
describe('signals reach the server', () => {
  it.each([
    ['SIGTERM', 'npm start'],
    ['SIGINT', 'npm start'],
  ] as const)(
    '%s to `%s` stops the server',
    async (signal, _command) => {
      const { stopped, output } = await stopsOn(signal, 'npm', ['start']);
      expect(stopped).toBe(true);
      expect(output).toContain(`"msg":"shutting down","signal":"${signal}"`);
    },
    180_000,
  );

  it('SIGTERM to `pnpm start` (the pinned pnpm) stops the server', async () => {
    const { stopped, output } = await stopsOn('SIGTERM', process.execPath, [pnpmScript(ROOT), 'start']);
    expect(stopped).toBe(true);
    expect(output).toContain('"msg":"shutting down","signal":"SIGTERM"');
  }, 180_000);

  it.each(['quickstart', 'clients', 'custom-descriptor'])(
    'SIGTERM to `pnpm --filter @tiffin/example-%s start` stops the server (the next start finds the port free)',
    async (example) => {
      const { stopped, output } = await stopsOn('SIGTERM', process.execPath, [
        pnpmScript(ROOT),
        '--filter',
        `@tiffin/example-${example}`,
        'start',
      ]);
      expect(stopped).toBe(true);
      expect(output).toContain('"msg":"shutting down","signal":"SIGTERM"');
    },
    180_000,
  );

  it('SIGTERM to `npm start` in an example folder stops the server', async () => {
    const { stopped } = await stopsOn('SIGTERM', 'npm', ['start'], `${ROOT}examples/clients`);
    expect(stopped).toBe(true);
  }, 180_000);

  it('SIGTERM to `npx tiffin serve` stops the server although npm signals only the shell under it', async () => {
    const { stopped, output } = await stopsOn('SIGTERM', 'npx', [
      'tiffin',
      'serve',
      'examples/quickstart/service.ts',
    ]);
    expect(stopped).toBe(true);
    expect(output).toContain('"msg":"shutting down","signal":"SIGTERM"');
  }, 180_000);
});
