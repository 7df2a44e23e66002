import { InvalidArgument } from '../../errors/index.js';
import type { Cookie } from '../../http/response.js';
import type { Context } from '../../service/context.js';
import type { DescriptorSpec } from '../openapi.js';

/** What a handler's ctx contributes to a response (docs/spec/io-descriptors.md §1.3 rule 4, D11); defaults without ctx. */
export interface ResponseSettings {
  status: number;
  headers: Array<[string, string]>;
  cookies: Cookie[];
}

export function responseSettings(ctx: Context | null | undefined): ResponseSettings {
  if (!ctx) return { status: 200, headers: [], cookies: [] };
  return {
    status: ctx.response.status,
    headers: ctx.response.headerList(),
    cookies: ctx.response.cookies.length > 0 ? [...ctx.response.cookies] : [],
  };
}

/** Spec 1.1: every built-in `fromSpec` but Text's needs an `args` object. */
export function requireArgs(spec: DescriptorSpec, className: string): Record<string, unknown> {
  if (!spec || typeof spec !== 'object' || !spec.args || typeof spec.args !== 'object') {
    throw new InvalidArgument(`Missing args key in ${className} spec: ${JSON.stringify(spec)}`);
  }
  return spec.args;
}

/** Name of a value's type for messages (`string`, `Array`, `Buffer`, `null`). */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  return (value as object).constructor?.name ?? 'object';
}
