import { describe, expect, it } from 'vitest';
import { Cancelled, GatewayTimeout, PayloadTooLarge, TiffinError } from '../../src/errors/index.js';
import { TaskPool } from '../../src/threads/index.js';

const pool = new TaskPool({ name: 'Test tasks', module: new URL('./tasks.ts', import.meta.url), threads: 2 });

describe('TaskPool: CPU-heavy work in reused worker threads', () => {
  it('runs tasks there: arguments copied in, results moved back when the task says so', async () => {
    expect(await pool.run<number>('sum', [Float64Array.from([1, 2, 3.5])])).toBe(6.5);
    const squares = await pool.run<Float64Array>('squares', [5]);
    expect(squares).toBeInstanceOf(Float64Array);
    expect([...squares]).toEqual([0, 1, 4, 9, 16]);
  }, 60_000);

  it('a Tiffin error keeps its class, status and code; any other keeps its type and message', async () => {
    const refused = await pool.run('refuse', [5e9]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PayloadTooLarge);
    expect(refused).toMatchObject({
      httpStatus: 413,
      code: 'PAYLOAD_TOO_LARGE',
      message: '5000000000 cells, over the limit',
    });
    const failed = await pool.run('fail', []).catch((e: unknown) => e);
    expect(failed).not.toBeInstanceOf(TiffinError);
    expect(failed).toMatchObject({ name: 'RangeError', message: 'internal detail' });
    await expect(pool.run('nothing', [])).rejects.toThrow("no task 'nothing' in this thread");
  }, 60_000);

  it('a thread that dies fails its call only; the next calls get a fresh thread', async () => {
    await expect(pool.run('crash', [])).rejects.toThrow('Test tasks stopped: its thread exited with code 3');
    expect(await pool.run<number>('sum', [Float64Array.from([2, 2])])).toBe(4);
  }, 60_000);

  it('the event loop keeps turning while the threads work; calls beyond the threads wait their turn', async () => {
    let turns = 0;
    const ticker = setInterval(() => turns++, 5);
    // Four calls of 300 ms on two threads: two rounds, on two distinct threads. The same work on this thread
    // would give the ticker no turn at all until it ended.
    const threads = await Promise.all(Array.from({ length: 4 }, () => pool.run<number>('busy', [300])));
    clearInterval(ticker);
    expect(new Set(threads).size).toBe(2);
    expect(turns).toBeGreaterThan(10);
  }, 60_000);

  it('a call whose caller goes away is answered at once; one still queued never runs, nor holds its buffers', async () => {
    const one = new TaskPool({
      name: 'Queued tasks',
      module: new URL('./tasks.ts', import.meta.url),
      threads: 1,
    });
    // The only thread busy for 400 ms: the next calls wait in the queue.
    const running = one.run<number>('busy', [400]);
    const leaving = new AbortController();
    const gone = new Cancelled('the client left');
    const values = Float64Array.from([1, 2]);
    const started = performance.now();
    const queued = one.run<number>('sum', [values], [values.buffer], leaving.signal);
    const deadline = one.run<number>('busy', [1], [], AbortSignal.timeout(50));
    leaving.abort(gone);
    await expect(queued).rejects.toBe(gone);
    await expect(deadline).rejects.toMatchObject({ name: 'TimeoutError' });
    // Both answered while the thread was still busy, and taken off the queue.
    expect(performance.now() - started).toBeLessThan(400);
    expect(one['queue']).toHaveLength(0);
    expect(typeof (await running)).toBe('number');
    // A signal aborted already: refused before anything is queued; the pool serves the next call as before.
    await expect(
      one.run('sum', [values], [], AbortSignal.abort(new GatewayTimeout('past its deadline'))),
    ).rejects.toBeInstanceOf(GatewayTimeout);
    expect(await one.run<number>('sum', [Float64Array.from([3, 4])])).toBe(7);
  }, 60_000);
});
