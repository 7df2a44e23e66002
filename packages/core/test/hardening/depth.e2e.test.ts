import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMITS,
  defaultJsonEncoder,
  JSON as JSONDescriptor,
  Multipart,
  type NDArray,
  NumpyNdarray,
  Service,
} from '../../src/index.js';
import { nestsDeeperThan, resolveLimits } from '../../src/internal.js';
import { start } from '../server/helpers.js';

const nested = (depth: number, open = '[', close = ']') => `${open.repeat(depth)}${close.repeat(depth)}`;
const nestedObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

const svc = new Service('depth_limits');
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo_json(v) {
  return v;
});
svc.api({ input: new NumpyNdarray(), output: new NumpyNdarray() }, function echo_nd(v: NDArray) {
  return v;
});
svc.api({ input: new NumpyNdarray({ dtype: 'float32' }), output: new NumpyNdarray() }, function echo_f32(v) {
  return v;
});
svc.api(
  { input: new Multipart({ doc: new JSONDescriptor() }), output: new JSONDescriptor() },
  function echo_part(v) {
    return v.doc;
  },
);
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function deep_output(v) {
  let out: unknown = 1;
  for (let i = 0; i < Number(v); i++) out = new Map([['a', out]]);
  return out;
});

let handle: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  handle = await start(svc, { limits: { maxDepth: 64 } });
});
afterAll(async () => {
  await handle.close();
});

const post = (path: string, body: string, type = 'application/json') =>
  fetch(`${handle.url}${path}`, { method: 'POST', body, headers: { 'content-type': type } });

describe('nesting depth (issue 13 part 3)', () => {
  it('answers 400 for JSON-ish input deeper than the limit on every descriptor', async () => {
    for (const path of ['/echo_json', '/echo_nd', '/echo_f32']) {
      for (const body of [nested(10_000), nested(65), nestedObject(10_000), `[${nested(100_000)}]`]) {
        const res = await post(path, body);
        expect(res.status, `${path} ${body.slice(0, 20)}`).toBe(400);
        const json = (await res.json()) as { type: string; error: string };
        expect(json.type).toBe('BadInput');
      }
    }
    const res = await post('/echo_json', nested(64));
    expect(res.status).toBe(200);
  });

  it('checks the depth of JSON in a multipart part', async () => {
    const form = new FormData();
    form.set('doc', nested(10_000));
    const res = await fetch(`${handle.url}/echo_part`, { method: 'POST', body: form });
    expect(res.status).toBe(400);
  });

  it('answers a too-deep result with a 500 naming the limit, not a stack overflow', async () => {
    const res = await post('/deep_output', '100000');
    expect(res.status).toBe(500);
    expect((await fetch(`${handle.url}/livez`)).status).toBe(200);
    expect(handle.logs.records.some((e) => JSON.stringify(e).includes('deeper than'))).toBe(true);
  });
});

describe('limits module', () => {
  it('fills defaults and rejects unknown or invalid limits', () => {
    expect(resolveLimits({ maxDepth: 10 })).toMatchObject({
      maxDepth: 10,
      maxParts: DEFAULT_LIMITS.maxParts,
    });
    expect(() => resolveLimits({ maxDepht: 3 } as never)).toThrow(/Unknown limit 'maxDepht'/);
    expect(() => resolveLimits({ maxParts: -1 })).toThrow(/positive integer/);
  });

  it('measures depth without recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(nestsDeeperThan(deep, 512)).toBe(true);
    expect(nestsDeeperThan([[1], { a: [2] }], 3)).toBe(false);
    expect(nestsDeeperThan([[1], { a: [[2]] }], 3)).toBe(true);
    expect(() => defaultJsonEncoder(deep)).toThrow(/deeper than 512/);
  });
});
