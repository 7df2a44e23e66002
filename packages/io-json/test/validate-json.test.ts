import { BadInput, JSON as JSONDescriptor } from '@tiffin/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import '../src/index.js';
import { jsonRequest } from './helpers/request.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('validate_json (deprecated, docs/spec/io-descriptors.md §5.1)', () => {
  it('only logs a warning: a model still validates with validate_json false', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const descriptor = new JSONDescriptor({
      pydantic_model: z.object({ a: z.number() }),
      validate_json: false,
    });
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/validate_json.*deprecated/));
    expect(descriptor.validate_json).toBe(false);
    expect(await descriptor.fromHttpRequest(jsonRequest('{"a":1}'))).toEqual({ a: 1 });
    await expect(descriptor.fromHttpRequest(jsonRequest('{"a":"x"}'))).rejects.toBeInstanceOf(BadInput);
  });

  it('with validate_json true the model validates as usual', async () => {
    const descriptor = new JSONDescriptor({
      pydantic_model: z.object({ a: z.number() }),
      validate_json: true,
    });
    await expect(descriptor.fromHttpRequest(jsonRequest('{}'))).rejects.toBeInstanceOf(BadInput);
  });
});
