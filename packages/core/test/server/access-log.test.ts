import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonLineLogger } from '../../src/index.js';
import type { AccessLogEntry } from '../../src/logging/logger.js';

/** The line `access(entry)` writes and the line pino writes for `log('info', 'request', entry)`. */
function bothLines(entry: AccessLogEntry): [string, string] {
  const lines: string[] = [];
  const logger = new JsonLineLogger((line) => lines.push(line));
  logger.access(entry);
  logger.log('info', 'request', { ...entry });
  // The time field is stamped per millisecond: the two calls may straddle one.
  const untimed = lines.map((l) => l.replace(/,"time":"[^"]*"/, ''));
  return [untimed[0]!, untimed[1]!];
}

const entry: AccessLogEntry = {
  requestId: '3f1c2a4e-1b2c-4d5e-8f90-123456789abc',
  method: 'POST',
  path: '/echo',
  status: 200,
  requestType: 'application/json',
  requestLength: '112',
  responseType: 'application/json; charset=utf-8',
  ms: 0.4127,
};

describe('access-log line', () => {
  it('is the line pino writes for the same record, byte for byte', () => {
    const [fast, pino] = bothLines(entry);
    expect(fast).toBe(pino);
    expect(fast.endsWith('\n')).toBe(true);
    const record = JSON.parse(fast) as Record<string, unknown>;
    expect(Object.keys(record)).toEqual([
      'level',
      'msg',
      'requestId',
      'method',
      'path',
      'status',
      'requestType',
      'requestLength',
      'responseType',
      'ms',
    ]);
  });

  it('leaves absent fields out, as pino does', () => {
    const [fast, pino] = bothLines({
      ...entry,
      requestType: undefined,
      requestLength: undefined,
      responseType: undefined,
    });
    expect(fast).toBe(pino);
    expect(fast).not.toContain('requestType');
  });

  it('escapes client-sent text (quotes, backslashes, control characters, non-ASCII) into valid JSON', () => {
    const hostile = {
      ...entry,
      requestId: 'id"with\\quote',
      path: '/ap\u0000i\n"}{\u2028é😀',
      requestType: 'text/plain; x="\u001f"',
      requestLength: '١٢',
    };
    const [fast, pino] = bothLines(hostile);
    expect(JSON.parse(fast)).toEqual(JSON.parse(pino));
    expect(fast.split('\n')).toHaveLength(2);
    expect(JSON.parse(fast)).toMatchObject({ requestId: hostile.requestId, path: hostile.path });
  });

  it('reads back as the record it was given, for any strings', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        fc.string(),
        fc.integer({ min: 100, max: 599 }),
        (path, type, status) => {
          const [fast, pino] = bothLines({ ...entry, path, requestType: type, status });
          const record = JSON.parse(fast) as Record<string, unknown>;
          expect(record).toEqual(JSON.parse(pino));
          expect(record.path).toBe(path);
          expect(fast.indexOf('\n')).toBe(fast.length - 1);
        },
      ),
      { numRuns: 300 },
    );
  });
});
