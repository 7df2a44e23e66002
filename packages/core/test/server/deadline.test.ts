import { describe, expect, it } from 'vitest';
import { Deadlines } from '../../src/runtime/deadlines.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('Deadlines', () => {
  it('work that finishes first is done; nothing stays pending', async () => {
    const deadlines = new Deadlines();
    expect(await deadlines.wait(sleep(1), 5)).toBe('done');
    expect(deadlines.pending).toBe(0);
    expect(deadlines.retained).toBe(0);
  });

  it('work slower than its deadline expires, and may still finish later', async () => {
    const deadlines = new Deadlines();
    let finished = false;
    const work = sleep(150).then(() => {
      finished = true;
    });
    expect(await deadlines.wait(work, 0.02)).toBe('expired');
    expect(finished).toBe(false);
    await work;
    expect(deadlines.retained).toBe(0);
  });

  it('a shorter deadline started later fires first', async () => {
    const deadlines = new Deadlines();
    const order: string[] = [];
    const never = new Promise<void>(() => {});
    const long = deadlines.wait(never, 0.3).then((o) => order.push(`long:${o}`));
    const short = deadlines.wait(never, 0.02).then((o) => order.push(`short:${o}`));
    await Promise.all([long, short]);
    expect(order).toEqual(['short:expired', 'long:expired']);
  });

  it('a failing work rejects with its error', async () => {
    const deadlines = new Deadlines();
    await expect(deadlines.wait(Promise.reject(new Error('boom')), 5)).rejects.toThrow('boom');
    expect(deadlines.retained).toBe(0);
  });

  it('no deadline when seconds is not a positive finite number', async () => {
    const deadlines = new Deadlines();
    for (const seconds of [0, -1, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(await deadlines.wait(sleep(1), seconds)).toBe('done');
    }
    expect(deadlines.retained).toBe(0);
  });

  it('memory follows the requests in flight, not the requests served', async () => {
    const deadlines = new Deadlines();
    const stuck = deadlines.wait(new Promise<void>(() => {}), 0.2);
    for (let i = 0; i < 5000; i++) await deadlines.wait(Promise.resolve(), 60);
    // Only the stuck waiter's queue holds anything; the 60 s queue was emptied as each request settled.
    expect(deadlines.pending).toBe(1);
    expect(deadlines.retained).toBe(1);
    expect(await stuck).toBe('expired');
    expect(deadlines.retained).toBe(0);
  });

  it('settled waiters ahead of a slow one are compacted away', async () => {
    const deadlines = new Deadlines();
    let release: () => void = () => {};
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slowWait = deadlines.wait(slow, 60);
    for (let i = 0; i < 20_000; i++) await deadlines.wait(Promise.resolve(), 60);
    // Settled waiters queued behind the slow head are filtered out as the queue grows.
    expect(deadlines.pending).toBe(1);
    expect(deadlines.retained).toBeLessThanOrEqual(4096);
    release();
    expect(await slowWait).toBe('done');
    expect(deadlines.retained).toBe(0);
  });

  it('a moved deadline fires at its new time, in due order with the others of that duration', async () => {
    const deadlines = new Deadlines();
    const order: string[] = [];
    const t0 = performance.now();
    // Started first, moved last: a request that entered its mount once others had started.
    const early = deadlines.watch(60, t0 - 50, () => order.push('early'));
    deadlines.watch(0.2, t0, () => order.push('later'));
    deadlines.move(early!, 0.2, t0 - 50);
    await sleep(300);
    expect(order).toEqual(['early', 'later']);
    expect(deadlines.retained).toBe(0);
  });

  it('a moved deadline is cleared through its first handle, and moves on from where it was moved to', async () => {
    const deadlines = new Deadlines();
    const fired: string[] = [];
    const t0 = performance.now();
    const watch = deadlines.watch(0.02, t0, () => fired.push('fired'));
    deadlines.move(watch!, 60, t0);
    deadlines.move(watch!, 30, t0);
    await sleep(60);
    expect([fired, deadlines.pending]).toEqual([[], 1]);
    deadlines.clear(watch!);
    expect([deadlines.pending, deadlines.retained]).toEqual([0, 0]);
    // Once cleared (or fired), a move does nothing.
    deadlines.move(watch!, 0.01, t0);
    await sleep(30);
    expect([fired, deadlines.pending]).toEqual([[], 0]);
  });
});
