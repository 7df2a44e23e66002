import { OUTPUT_FORMATS, type OutputFormat } from '../../output-format.js';
import { invalidRequest } from './openai-error.js';

/** The fields of an OpenAI images request Tiffin acts on (the others are ignored, as OpenAI ignores unknown ones). */
export interface ImagesRequest {
  prompt: string;
  n: number;
  /** [width, height]; absent: the model's own size (or the upload's for an edit). */
  size: [number, number] | undefined;
  responseFormat: 'b64_json' | 'url';
  outputFormat: OutputFormat;
  /** Tiffin's extension (OpenAI has none): a seed makes the answer reproducible; absent: random. */
  seed: number | null;
}

/** What the model bounds a request by. */
interface Bounds {
  maxSize: number;
  maxImages: number;
}

const MAX_PROMPT = 32_000;

/**
 * An OpenAI images request (a JSON body, or a form's text fields where numbers arrive as strings) checked
 * against what this model can do: whatever it cannot honour is a 400 naming the parameter.
 */
export function imagesRequest(
  fields: Record<string, unknown>,
  bounds: Bounds,
  route: 'generations' | 'edits' | 'variations',
): ImagesRequest {
  const prompt = fields.prompt;
  if (route !== 'variations' && (typeof prompt !== 'string' || prompt.length === 0))
    throw invalidRequest('prompt is required: a non-empty string', {
      param: 'prompt',
      code: 'MISSING_REQUIRED_PARAMETER',
    });
  if (typeof prompt === 'string' && prompt.length > MAX_PROMPT)
    throw invalidRequest(`prompt is longer than ${MAX_PROMPT} characters`, {
      param: 'prompt',
      code: 'INVALID_VALUE',
    });
  return {
    prompt: route === 'variations' ? '' : (prompt as string),
    n: countOf(fields.n, bounds.maxImages),
    size: sizeOf(fields.size, bounds.maxSize),
    responseFormat: oneOf(
      fields.response_format,
      'response_format',
      ['b64_json', 'url'] as const,
      'b64_json',
    ),
    outputFormat: oneOf(fields.output_format, 'output_format', OUTPUT_FORMATS, 'png'),
    seed: seedOf(fields.seed),
  };
}

function countOf(value: unknown, max: number): number {
  if (value === undefined || value === null || value === '') return 1;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > max)
    throw invalidRequest(`n must be an integer from 1 to ${max} on this model`, {
      param: 'n',
      code: 'INVALID_VALUE',
    });
  return n;
}

/** `size` "WxH": both sides multiples of 8 within the model's bound; "auto" or absent: the default size. */
export function sizeOf(value: unknown, maxSize: number): [number, number] | undefined {
  if (value === undefined || value === null || value === '' || value === 'auto') return undefined;
  const match = typeof value === 'string' ? /^(\d{1,5})x(\d{1,5})$/.exec(value) : null;
  const refuse = () =>
    invalidRequest(
      `size must be "WxH" with both sides multiples of 8 from 8 to ${maxSize} on this model (or "auto")`,
      { param: 'size', code: 'INVALID_SIZE' },
    );
  if (!match) throw refuse();
  const [width, height] = [Number(match[1]), Number(match[2])];
  for (const side of [width, height]) if (side < 8 || side > maxSize || side % 8 !== 0) throw refuse();
  return [width, height];
}

function oneOf<T extends string>(value: unknown, param: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw invalidRequest(`${param} must be one of ${allowed.join(', ')}`, {
    param: param,
    code: 'INVALID_VALUE',
  });
}

function seedOf(value: unknown): number | null {
  if (value === undefined || value === null || value === '') return null;
  const seed = typeof value === 'string' ? Number(value) : value;
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw invalidRequest('seed must be an integer from 0 to 4294967295', {
      param: 'seed',
      code: 'INVALID_VALUE',
    });
  return seed;
}
