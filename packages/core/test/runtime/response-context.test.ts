import { describe, expect, it } from 'vitest';
import { Context } from '../../src/context/context.js';
import { buildResponse } from '../../src/http/response.js';
import { applyResponseContext } from '../../src/runtime/response-context.js';
import { request } from '../io/helpers.js';

const answer = () => buildResponse({ body: 'a,b', mediaType: 'text/csv' });

describe('applyResponseContext: the handler ctx.response applied once to a descriptor answer', () => {
  it('returns the answer itself when the handler set nothing', () => {
    const response = answer();
    expect(applyResponseContext(response, new Context(request(''), {}))).toBe(response);
  });

  it('handler headers first and winning by name, then the descriptor headers, then cookies; status kept unless set', () => {
    const ctx = new Context(request(''), {});
    ctx.response.headers.set('X-Trace', 'abc');
    ctx.response.headers.set('content-type', 'text/plain');
    ctx.response.setCookie('sess', '1');
    const merged = applyResponseContext(answer(), ctx);
    expect(merged.status).toBe(200);
    expect(merged.headers).toEqual([
      ['content-type', 'text/plain'],
      ['x-trace', 'abc'],
      ['content-length', '3'],
      ['set-cookie', 'sess=1; Path=/; SameSite=lax'],
    ]);
    ctx.response.status = 201;
    expect(applyResponseContext(buildResponse({ body: '', status: 202 }), ctx).status).toBe(201);
  });

  it('a descriptor that still copies ctx.response itself gets no header or cookie twice', () => {
    const ctx = new Context(request(''), {});
    ctx.response.status = 207;
    ctx.response.headers.set('x-a', '1');
    ctx.response.setCookie('k', 'v');
    const legacy = buildResponse({
      body: 'x',
      mediaType: 'text/csv',
      status: ctx.response.status,
      headers: ctx.response.headerList(),
      cookies: ctx.response.cookies,
    });
    const merged = applyResponseContext(legacy, ctx);
    expect(merged.status).toBe(207);
    expect(merged.headers.map(([name]) => name)).toEqual([
      'x-a',
      'content-length',
      'content-type',
      'set-cookie',
    ]);
  });
});
