/**
 * Where redis-server's time goes per task (`PROFILE=1` on `task-overhead.ts`): every command it ran over a case,
 * from its `SLOWLOG` with every command logged, grouped by command and, for `EVALSHA`, by script (the store's
 * `commands/*.lua` and BullMQ's own, named from their SHA-1), as calls and µs per task (a script's time holds
 * that of the commands it ran, which the log lists as well); then `INFO commandstats` over the same run. The log's time is the command's execution alone (no reading,
 * parsing or reply), so it sums to less than redis-server's CPU; logging every command costs some too, so a
 * profiled run's tasks/s are not the figure to read.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Redis } from 'ioredis';

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/** SHA-1 → script name, for the store's scripts (as `store-commands.ts` builds them) and BullMQ's. */
function scriptNames(): Map<string, string> {
  const names = new Map<string, string>();
  const commands = new URL('../src/commands/', import.meta.url);
  const read = (name: string) => readFileSync(new URL(`${name}.lua`, commands), 'utf8');
  for (const file of readdirSync(commands).filter((f) => f.endsWith('.lua'))) {
    const name = file.slice(0, -4);
    const lua = read(name).replace(/^--- @include "([a-z/-]+)"$/gm, (_, include: string) => read(include));
    names.set(sha1(lua), `tiffin ${name}`);
  }
  // BullMQ defines each script from its `content` as its `scripts/index.js` exports them.
  const require = createRequire(import.meta.url);
  const scripts = require(join(dirname(require.resolve('bullmq')), 'scripts', 'index.js')) as Record<
    string,
    { name?: string; content?: string; keys?: number }
  >;
  for (const script of Object.values(scripts))
    if (script?.content) names.set(sha1(script.content), `bullmq ${script.name}-${script.keys}`);
  return names;
}

function commandStats(info: string): Map<string, { calls: number; usec: number }> {
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm))
    stats.set(m[1] as string, { calls: Number(m[2]), usec: Number(m[3]) });
  return stats;
}

export interface Profile {
  stop(tasks: number): Promise<string>;
}

/** Log every command from now; `stop` answers the table per task and puts the log's settings back. */
export async function profileRedis(probe: Redis): Promise<Profile> {
  const names = scriptNames();
  await probe.config('SET', 'slowlog-log-slower-than', '0');
  await probe.config('SET', 'slowlog-max-len', '1000000');
  await probe.slowlog('RESET');
  const before = commandStats(await probe.info('commandstats'));
  return {
    async stop(tasks) {
      const after = commandStats(await probe.info('commandstats'));
      const log = (await probe.slowlog('GET', -1)) as Array<[number, number, number, string[]]>;
      await probe.config('SET', 'slowlog-log-slower-than', '10000');
      await probe.slowlog('RESET');
      const top = new Map<string, { calls: number; usec: number }>();
      for (const [, , usec, args] of log) {
        const command = (args[0] ?? '?').toLowerCase();
        if (command === 'slowlog' || command === 'config' || command === 'info') continue;
        const name =
          command === 'evalsha'
            ? (names.get(String(args[1])) ?? `evalsha ${String(args[1]).slice(0, 8)}`)
            : command;
        const entry = top.get(name) ?? { calls: 0, usec: 0 };
        entry.calls++;
        entry.usec += usec;
        top.set(name, entry);
      }
      const rows = (stats: Map<string, { calls: number; usec: number }>) =>
        [...stats]
          .sort((a, b) => b[1].usec - a[1].usec)
          .map(
            ([name, s]) =>
              `| ${name} | ${(s.calls / tasks).toFixed(2)} | ${(s.usec / tasks).toFixed(1)} | ${(s.usec / Math.max(1, s.calls)).toFixed(1)} |`,
          );
      const inner = new Map<string, { calls: number; usec: number }>();
      for (const [name, s] of after) {
        const was = before.get(name) ?? { calls: 0, usec: 0 };
        if (['slowlog', 'config', 'info'].includes(name) || s.calls === was.calls) continue;
        inner.set(name, { calls: s.calls - was.calls, usec: s.usec - was.usec });
      }
      return [
        "commands (SLOWLOG, execution only; redis-server 7 logs a script's own commands too, inside its time):",
        '| command or script | calls per task | µs per task | µs per call |',
        '|---|---|---|---|',
        ...rows(top),
        "every command, scripts' own included (INFO commandstats; a script counts its commands and itself):",
        '| command | calls per task | µs per task | µs per call |',
        '|---|---|---|---|',
        ...rows(inner),
      ].join('\n');
    },
  };
}
