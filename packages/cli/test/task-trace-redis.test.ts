import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { OtlpReceiver, type ReceivedSpan } from '../../otel/test/otlp-receiver.js';
import { describeOnRedis } from '../../tasks-redis/test/describe-on-redis.js';
import { CLI_DIR, CliProcess } from './cli-process.js';

const FIXTURE = join(CLI_DIR, 'test', 'fixtures', 'traced-tasks.ts');
const CALLER_TRACE = '6d'.repeat(16);
const CALLER_SPAN = '00f067aa0ba902b7';
const CONSUMER = 5;

const receiver = new OtlpReceiver();
const running: CliProcess[] = [];
const saved = { ...process.env };
beforeAll(async () => {
  // The replicas inherit these: OTLP/JSON to the receiver, exported within 100 ms of each span's end.
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = await receiver.start();
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
});
afterAll(async () => {
  for (const p of running.splice(0)) {
    p.kill('SIGKILL');
    await p.exited;
  }
  process.env = saved;
  await receiver.close();
});

interface View {
  status: string;
}

describeOnRedis('a task’s trace across two replicas on one redis-server', (redis) => {
  /** A replica of the service on the shared store, its spans' resource naming it (`service.instance.id`). */
  const replica = async (name: string) => {
    process.env.OTEL_RESOURCE_ATTRIBUTES = `service.instance.id=${name}`;
    const p = new CliProcess([
      'serve',
      FIXTURE,
      '--port',
      '0',
      '--tasks',
      `redis://127.0.0.1:${redis.port}/3`,
    ]);
    running.push(p);
    const [ready] = await p.waitFor((r) => r.msg === 'ready', 1, 90_000);
    return { process: p, url: String(ready?.url) };
  };
  const submit = async (url: string, api: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}/${api}/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as { id: string }).id;
  };
  const view = async (url: string, api: string, id: string) =>
    (await (await fetch(`${url}/${api}/status?id=${id}`)).json()) as View;

  it('replica B runs the task replica A accepted: its run span is a child of A’s submit span', {
    timeout: 240_000,
  }, async () => {
    const a = await replica('A');
    // A's one task slot is taken, so the next task is B's to run.
    const held = await submit(a.url, 'hold', { ms: 600_000 });
    await vi.waitFor(async () => expect((await view(a.url, 'hold', held)).status).toBe('running'), {
      timeout: 30_000,
      interval: 100,
    });
    const b = await replica('B');
    const id = await submit(
      a.url,
      'steps',
      { n: 3 },
      { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: 'vendor=abc' },
    );
    let done: View | undefined;
    await vi.waitFor(
      async () => {
        done = await view(a.url, 'steps', id);
        expect(done.status).toBe('succeeded');
      },
      { timeout: 60_000, interval: 100 },
    );
    expect(done?.status).toBe('succeeded');
    const answer = (await (await fetch(`${a.url}/steps/get?id=${id}`)).json()) as { pid: number };
    expect(answer.pid).toBe(b.process.child.pid);
    let spans: ReceivedSpan[] = [];
    await vi.waitFor(
      () => {
        spans = receiver.spans.filter((s) => s.traceId === CALLER_TRACE);
        expect(spans.map((s) => s.name)).toEqual(
          expect.arrayContaining(['POST /steps/submit', 'task steps', 'run']),
        );
      },
      { timeout: 30_000, interval: 100 },
    );
    const submitted = spans.find((s) => s.name === 'POST /steps/submit') as ReceivedSpan;
    const run = spans.find((s) => s.name === 'task steps') as ReceivedSpan;
    expect(submitted).toMatchObject({ parentSpanId: CALLER_SPAN, resource: { 'service.instance.id': 'A' } });
    // The context stored with the task in Redis carried the trace (and the caller's tracestate) to B.
    expect(run).toMatchObject({
      parentSpanId: submitted.spanId,
      traceState: 'vendor=abc',
      kind: CONSUMER,
      resource: { 'service.instance.id': 'B', 'service.name': 'traced_tasks' },
      attributes: { 'tiffin.api': 'steps', 'tiffin.task.id': id, 'tiffin.task.outcome': 'succeeded' },
    });
    expect(run.events.filter((e) => e === 'step')).toHaveLength(3);
    const inner = spans.find((s) => s.name === 'run' && s.parentSpanId === run.spanId);
    expect(inner?.resource['service.instance.id']).toBe('B');
  });
});
