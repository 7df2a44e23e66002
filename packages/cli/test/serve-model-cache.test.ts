import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFill } from '../../onnx/test/fixtures/test-models.js';
import { hasRedisServer, RedisServer } from '../../tasks-redis/test/redis-server.js';
import { ModelServers } from './model-servers.js';

/*
 * `tiffin serve model.onnx --cache-ttl N` (real server processes): the zero-code model's answers are kept and
 * sent again for the same input (`Tiffin-Cache: hit`), counted on /metrics; `Cache-Control: no-cache` runs the
 * model; with `--cache redis://…` two replicas share the answers (docs/cache.md).
 */

const servers = new ModelServers();
let model: string;
let url: string;

beforeAll(async () => {
  await servers.open('tiffin-cache-');
  model = writeFill(servers.dir);
  url = await servers.serve([model, '--cache-ttl', '60', '--no-batching']);
}, 60_000);
afterAll(() => servers.close());

const predict = (base: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/predict`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

async function counted(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`tiffin_api_server_${name}{`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('a zero-code model with --cache-ttl', () => {
  it('sends a repeated input from the cache, counts hits and misses, and runs afresh for no-cache', async () => {
    const first = await predict(url, '[2, 3]');
    expect(first.status).toBe(200);
    expect(first.headers.get('tiffin-cache')).toBe('miss');
    const answer = await first.text();
    // The same input spelled otherwise is the same decoded input: the same key.
    const again = await predict(url, '[ 2,3 ]');
    expect(again.headers.get('tiffin-cache')).toBe('hit');
    expect(await again.text()).toBe(answer);
    expect((await predict(url, '[2, 4]')).headers.get('tiffin-cache')).toBe('miss');
    const fresh = await predict(url, '[2, 3]', { 'cache-control': 'no-cache' });
    expect(fresh.headers.get('tiffin-cache')).toBe('miss');
    expect(await counted(url, 'cache_hits_total')).toBe(1);
    expect(await counted(url, 'cache_misses_total')).toBe(3);
  });
});

describe.skipIf(!hasRedisServer())('two replicas with --cache redis://', () => {
  let redis: RedisServer;
  const replicas: string[] = [];
  beforeAll(async () => {
    redis = await RedisServer.start('everysec');
    for (let i = 0; i < 2; i++)
      replicas.push(await servers.serve([model, '--cache-ttl', '60', '--no-batching', '--cache', redis.url]));
  }, 60_000);
  afterAll(async () => {
    await redis?.stop();
  });

  it('answer from the cache what the other replica computed', async () => {
    const [a, b] = replicas as [string, string];
    const computed = await predict(a, '[5, 7]');
    expect(computed.headers.get('tiffin-cache')).toBe('miss');
    const shared = await predict(b, '[5, 7]');
    expect(shared.headers.get('tiffin-cache')).toBe('hit');
    expect(await shared.text()).toBe(await computed.text());
    expect(await counted(b, 'cache_hits_total')).toBe(1);
  });
});
