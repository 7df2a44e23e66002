import type { WireForm } from '@tiffin/core';
import { TiffinClientError } from './errors.js';

export type { WireForm };

/** One API of the service, from its OpenAPI operation. */
export interface ApiInfo {
  readonly name: string;
  /** URL path, e.g. `/classify`. */
  readonly route: string;
  /** How the input travels (`x-tiffin-wire` of the request body); null: sent by its JavaScript type. */
  readonly input: WireForm | null;
  /** How the output travels (`x-tiffin-wire` of the 200 response); null: read by its media type. */
  readonly output: WireForm | null;
  readonly doc: string;
  /** Whether the API is also served as a task (`<route>/submit`, `/status`, `/get`, `/cancel`, `/events`). */
  readonly task: boolean;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The wire form a side declares. The client switches on the form, a small closed set, never on descriptor
 * ids: a descriptor it has never heard of works as soon as the server publishes its form.
 */
function wireOf(holder: unknown): WireForm | null {
  if (!isObject(holder)) return null;
  const wire = holder['x-tiffin-wire'];
  return isObject(wire) && typeof wire.form === 'string' ? (wire as unknown as WireForm) : null;
}

/** The APIs of a Tiffin `/docs.json`: operations carrying `x-tiffin-name`, by name. */
export function apisFromOpenApi(doc: unknown): Map<string, ApiInfo> {
  if (!isObject(doc) || !isObject(doc.paths)) {
    throw new TiffinClientError('/docs.json: not an OpenAPI document (no "paths")', 'protocol');
  }
  const apis = new Map<string, ApiInfo>();
  for (const [route, item] of Object.entries(doc.paths)) {
    if (!isObject(item) || !isObject(item.post)) continue;
    const op = item.post;
    const name = op['x-tiffin-name'];
    if (typeof name !== 'string') continue;
    const responses = isObject(op.responses) ? op.responses : {};
    apis.set(name, {
      name,
      route,
      input: wireOf(op.requestBody),
      output: wireOf(responses['200']),
      doc: typeof op.description === 'string' ? op.description : '',
      task: isTaskSubmit(doc.paths[`${route}/submit`]),
    });
  }
  return apis;
}

/** Whether a path item is a task's submit route (`x-tiffin-task` on its POST). */
function isTaskSubmit(item: unknown): boolean {
  return isObject(item) && isObject(item.post) && isObject(item.post['x-tiffin-task']);
}
