import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { coalesceWrites } from '../src/coalesced-writes.js';
import { describeOnRedis } from './describe-on-redis.js';

describeOnRedis('coalesceWrites on a real redis-server', (redis) => {
  const opened: Redis[] = [];
  const connect = async (): Promise<Redis> => {
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    // Refused connects while the server is stopped are expected here.
    connection.on('error', () => {});
    opened.push(connection);
    await connection.ping();
    return connection;
  };
  afterEach(() => {
    for (const connection of opened.splice(0)) connection.disconnect();
  });

  /** The reads redis-server has made (each one a write some client sent), the INFO asking for it included. */
  const reads = async (probe: Redis) =>
    Number(/^total_reads_processed:(\d+)/m.exec(await probe.info('stats'))?.[1] ?? Number.NaN);

  it('sends the commands of one tick in one write, each answered in its order', async () => {
    const probe = await connect();
    const connection = await connect();
    coalesceWrites(connection);
    const before = await reads(probe);
    const keys = Array.from({ length: 20 }, (_, k) => `coalesced:${k}`);
    const sets = await Promise.all(keys.map((key, k) => connection.set(key, String(k))));
    const after = await reads(probe);
    expect(sets).toEqual(keys.map(() => 'OK'));
    // One read for the 20 commands, one for the probe's INFO.
    expect(after - before).toBe(2);
    // The next tick's commands go out too (the socket was uncorked), with their own answers.
    expect(await Promise.all(keys.map((key) => connection.get(key)))).toEqual(keys.map((_, k) => String(k)));
    // A failing command fails alone.
    const mixed = await Promise.allSettled([
      connection.incr('coalesced:0'),
      connection.hget('coalesced:1', 'f'),
    ]);
    expect(mixed.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
  });

  it('sends with them the commands of the promise reactions that follow, still in order', async () => {
    const probe = await connect();
    const connection = await connect();
    coalesceWrites(connection);
    const before = await reads(probe);
    // A callback (here a timer's) sends a command, and the promise reactions after it send the next ones.
    const sent = await new Promise<Array<Promise<unknown>>>((resolve) =>
      setTimeout(() => {
        const first = connection.set('coalesced:chain', '1');
        const second = Promise.resolve().then(() => connection.incr('coalesced:chain'));
        const third = Promise.resolve()
          .then(() => undefined)
          .then(() => connection.get('coalesced:chain'));
        resolve([first, second, third]);
      }, 0),
    );
    const [first, second, third] = sent;
    expect(await Promise.all([first, second, third])).toEqual(['OK', 2, '2']);
    expect((await reads(probe)) - before).toBe(2);
  });

  it('keeps sending after the connection is lost and made again', async () => {
    const connection = await connect();
    coalesceWrites(connection);
    await connection.set('coalesced:again', 'before');
    const closed = new Promise((resolve) => connection.once('close', resolve));
    await redis.pause();
    await closed;
    const ready = new Promise((resolve) => connection.once('ready', resolve));
    await redis.resume();
    // ioredis connects again by itself; the commands of a tick on the new socket are sent as on the first one.
    await ready;
    const [set, get] = await Promise.all([
      connection.set('coalesced:again', 'after'),
      connection.get('coalesced:again'),
    ]);
    expect([set, get]).toEqual(['OK', 'after']);
  });
});
