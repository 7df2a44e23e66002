import { TiffinClientError } from './errors.js';

/** A descriptor as `/docs.json` describes it (`x-tiffin-io-descriptor`). */
export interface DescriptorInfo {
  readonly id: string | null;
  readonly args?: Record<string, unknown>;
}

/** One API of the service, from its OpenAPI operation. */
export interface ApiInfo {
  readonly name: string;
  /** URL path, e.g. `/classify`. */
  readonly route: string;
  readonly input: DescriptorInfo | null;
  readonly output: DescriptorInfo | null;
  readonly doc: string;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function descriptorOf(holder: unknown): DescriptorInfo | null {
  if (!isObject(holder)) return null;
  const spec = holder['x-tiffin-io-descriptor'];
  return isObject(spec) && (typeof spec.id === 'string' || spec.id === null)
    ? (spec as unknown as DescriptorInfo)
    : null;
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
      input: descriptorOf(op.requestBody),
      output: descriptorOf(responses['200']),
      doc: typeof op.description === 'string' ? op.description : '',
    });
  }
  return apis;
}
