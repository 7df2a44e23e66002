/**
 * A1111's infotext: the generation's parameters as one text, written in every PNG's `parameters` chunk (the native
 * routes' and the A1111 routes'), in A1111's `info.infotexts`, and read back by `png-info` (A1111's
 * `create_infotext` and `parse_generation_parameters`):
 *
 *     a red circle
 *     Negative prompt: blue
 *     Steps: 20, Sampler: Euler a, Schedule type: Automatic, CFG scale: 7, Seed: 1, Size: 512x512, Model hash: …, Model: …
 */

/** One image's parameters, in the order A1111 writes them; null or undefined fields are left out. */
export interface InfotextFields {
  prompt: string;
  negativePrompt: string;
  steps: number;
  sampler: string;
  scheduleType: string | null;
  cfgScale: number;
  seed: number;
  width: number;
  height: number;
  modelHash: string | null;
  model: string | null;
  denoisingStrength: number | null;
  /** A1111's `Clip skip` (1: the last layer, left out): Tiffin's `clip_skip` + 1. */
  clipSkip?: number | null;
  /** The hires fix's fields (txt2img with `enable_hr`): A1111's `Hires upscale` / `Hires resize`, `Hires steps`, `Hires upscaler`. */
  hiresUpscale?: number | null;
  hiresResize?: string | null;
  hiresSteps?: number | null;
  hiresUpscaler?: string | null;
}

/** A value as A1111 quotes it: JSON-quoted when it holds a comma, a colon or a newline. */
function quote(value: string | number): string {
  const text = String(value);
  return /[,:\n]/.test(text) ? JSON.stringify(text) : text;
}

export function infotext(f: InfotextFields): string {
  const params: Array<[string, string | number | null]> = [
    ['Steps', f.steps],
    ['Sampler', f.sampler],
    ['Schedule type', f.scheduleType],
    ['CFG scale', f.cfgScale],
    ['Seed', f.seed],
    ['Size', `${f.width}x${f.height}`],
    ['Model hash', f.modelHash],
    ['Model', f.model],
    ['Denoising strength', f.denoisingStrength],
    ['Clip skip', f.clipSkip ?? null],
    ['Hires upscale', f.hiresUpscale ?? null],
    ['Hires resize', f.hiresResize ?? null],
    ['Hires steps', f.hiresSteps ?? null],
    ['Hires upscaler', f.hiresUpscaler ?? null],
  ];
  const line = params
    .filter((p): p is [string, string | number] => p[1] !== null && p[1] !== undefined)
    .map(([k, v]) => `${k}: ${quote(v)}`)
    .join(', ');
  const negative = f.negativePrompt ? `\nNegative prompt: ${f.negativePrompt}` : '';
  return `${f.prompt}${negative}\n${line}`.trim();
}

/**
 * `Key: value` pairs of the last line (a quoted value may hold commas and escaped quotes), as A1111 reads them; a
 * key is at most 64 characters, which keeps a hostile line's matching linear in its length.
 */
const PARAM = /([\p{L}\p{N}_][\p{L}\p{N}_ \-/]{1,63}):\s*("(?:\\.|[^\\"])+"|[^,]*)(?:,|$)/gu;
const IMAGE_SIZE = /^(\d+)x(\d+)$/;

function unquote(text: string): string {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'string' ? value : text;
  } catch {
    return text;
  }
}

/**
 * An infotext back as A1111's `png-info` answers its `parameters`: `Prompt`, `Negative prompt`, then every
 * `Key: value` of the last line as strings (a size `WxH` as `Key-1` and `Key-2`). A last line with fewer than three
 * pairs is part of the prompt, as in A1111.
 */
export function parseInfotext(text: string): Record<string, string> {
  const lines = text.trim().split('\n');
  let last = lines.pop() ?? '';
  if ([...last.matchAll(PARAM)].length < 3) {
    lines.push(last);
    last = '';
  }
  let prompt = '';
  let negative = '';
  let inNegative = false;
  for (const raw of lines) {
    let line = raw.trim();
    if (line.startsWith('Negative prompt:')) {
      inNegative = true;
      line = line.slice('Negative prompt:'.length).trim();
    }
    if (inNegative) negative += (negative ? '\n' : '') + line;
    else prompt += (prompt ? '\n' : '') + line;
  }
  const result = new Map<string, string>([
    ['Prompt', prompt],
    ['Negative prompt', negative],
  ]);
  for (const [, key, rawValue] of last.matchAll(PARAM)) {
    const value = rawValue.startsWith('"') && rawValue.endsWith('"') ? unquote(rawValue) : rawValue;
    const size = IMAGE_SIZE.exec(value);
    if (size) {
      result.set(`${key}-1`, size[1]);
      result.set(`${key}-2`, size[2]);
    } else result.set(key, value);
  }
  // fromEntries defines own properties: a `__proto__` key stays a key.
  return Object.fromEntries(result);
}
