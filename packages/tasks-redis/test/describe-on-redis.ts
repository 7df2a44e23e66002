import { afterAll, beforeAll, describe, it } from 'vitest';
import { hasRedisServer, RedisServer } from './redis-server.js';

// The vitest half of the Redis test helpers: `redis-server.ts` stays free of vitest, so the benchmark starts
// a server with it too.

/** The server a `describeOnRedis` block runs on, there from its `beforeAll` on. */
export interface RedisHandle {
  readonly url: string;
  readonly port: number;
  /** Stop it (an outage), keeping its data and port. */
  pause(): Promise<void>;
  /** Start it again after `pause()`. */
  resume(): Promise<void>;
  /** Freeze it (SIGSTOP): connected, answering nothing, as a Redis that hangs. */
  freeze(): void;
  /** Let it go on after `freeze()`. */
  thaw(): void;
}

/**
 * `describe(name, body)` on a real redis-server started for the block and stopped after it. Where redis-server is
 * not installed, one test fails and says so, instead of the block being skipped quietly (`.ci/run` installs it).
 */
export function describeOnRedis(name: string, body: (redis: RedisHandle) => void): void {
  if (!hasRedisServer()) {
    it(`${name}: needs redis-server`, () => {
      throw new Error('redis-server is not installed: apt-get install -y redis-server');
    });
    return;
  }
  describe(name, () => {
    let server: RedisServer | undefined;
    const started = (): RedisServer => {
      if (!server) throw new Error('redis-server is started in beforeAll');
      return server;
    };
    beforeAll(async () => {
      server = await RedisServer.start();
    });
    afterAll(async () => {
      await server?.stop();
    });
    body({
      get url() {
        return started().url;
      },
      get port() {
        return started().port;
      },
      pause: () => started().pause(),
      resume: () => started().resume(),
      freeze: () => started().freeze(),
      thaw: () => started().thaw(),
    });
  });
}
