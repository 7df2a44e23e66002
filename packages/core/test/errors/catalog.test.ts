import { describe, expect, it } from 'vitest';

import * as errors from '../../src/errors/index.js';
import {
  BadInput,
  ERROR_CODES,
  type ErrorCodeEntry,
  grpcStatusOfCode,
  isTiffinError,
  type TiffinError,
} from '../../src/errors/index.js';
import * as modelErrors from '../../src/models/model-errors.js';
import * as taskErrors from '../../src/tasks/task-errors.js';

type ErrorClass = typeof TiffinError;

function errorClasses(mod: Record<string, unknown>): Array<[string, ErrorClass]> {
  return Object.entries(mod).filter(
    (entry): entry is [string, ErrorClass] =>
      typeof entry[1] === 'function' &&
      (entry[1] === errors.TiffinError ||
        (entry[1] as { prototype: unknown }).prototype instanceof errors.TiffinError),
  );
}

describe('error catalog', () => {
  it('gives every error class a stable SCREAMING_SNAKE code, unique except where a class is an alias of its status', () => {
    const classes = errorClasses(errors);
    expect(classes.length).toBeGreaterThan(15);
    const byCode = new Map<string, string[]>();
    for (const [name, cls] of classes) {
      const err = new cls('m');
      expect(err.code, name).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(err.toBody()).toEqual({ error: 'm', type: name, code: err.code });
      byCode.set(err.code, [...(byCode.get(err.code) ?? []), name]);
    }
    // The base class and InternalServerError both mean "internal error"; every other code names one class.
    for (const [code, names] of byCode) {
      if (code === 'INTERNAL_ERROR') expect(names.sort()).toEqual(['InternalServerError', 'TiffinError']);
      else expect(names, code).toHaveLength(1);
    }
  });

  it("finds each class's code in ERROR_CODES with the class's HTTP status, type and gRPC status", () => {
    const classes = [...errorClasses(errors), ...errorClasses(modelErrors), ...errorClasses(taskErrors)];
    for (const [name, cls] of classes) {
      if (name === 'TiffinError') continue;
      const err = new cls('m');
      const entry = (ERROR_CODES as Record<string, ErrorCodeEntry>)[err.code];
      expect(entry, name).toBeDefined();
      expect([entry?.status, entry?.type], name).toEqual([err.httpStatus, name]);
      expect(grpcStatusOfCode(err.code as keyof typeof ERROR_CODES), name).toBe(err.grpcStatus);
    }
  });

  it('lets one error carry a finer code without changing its class or status', () => {
    const err = new BadInput('no such LoRA', { code: 'LORA_NOT_FOUND' });
    expect(err.httpStatus).toBe(400);
    expect(err.toBody()).toEqual({ error: 'no such LoRA', type: 'BadInput', code: 'LORA_NOT_FOUND' });
  });

  it('recognises errors thrown by another copy of the module (no instanceof)', async () => {
    // A second module instance, as a service with its own copy of @tiffin/core would load.
    // (The query string makes vitest load a fresh instance; the specifier is a variable so tsc does not
    // try to resolve it.)
    const specifier = '../../src/errors/index.js?second-copy';
    const copy = (await import(/* @vite-ignore */ specifier)) as typeof errors;
    expect(copy.BadInput).not.toBe(BadInput);
    const foreign = new copy.BadInput('bad shape');
    expect(foreign instanceof BadInput).toBe(false);
    expect(isTiffinError(foreign)).toBe(true);
    expect(foreign.httpStatus).toBe(400);
    expect(foreign.toBody()).toEqual({ error: 'bad shape', type: 'BadInput', code: 'BAD_INPUT' });
    expect(copy.isTiffinError(new BadInput('x'))).toBe(true);
  });

  it('does not take look-alikes for Tiffin errors', () => {
    expect(isTiffinError(new Error('x'))).toBe(false);
    expect(isTiffinError({ errorCode: 400, toBody: () => ({}), message: 'x' })).toBe(false);
    expect(isTiffinError(null)).toBe(false);
    expect(isTiffinError('BadInput')).toBe(false);
    // The brand alone is not enough: the shape must be there too.
    const branded = Object.defineProperty({}, Symbol.for('tiffin.error.v1'), { value: true });
    expect(isTiffinError(branded)).toBe(false);
  });
});
