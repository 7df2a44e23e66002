/**
 * AUTOMATIC1111's prompt reading (docs/spec/diffusion.md §3.1): the attention syntax against the examples of A1111's
 * `parse_prompt_attention` docstring, hostile prompts, chunks of 75 tokens, and what it does to embeddings and
 * images on the tiny SD 1.x and SDXL pipelines.
 */
import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdConditioning, sdxlConditioning } from '../src/pipeline/conditioning.js';
import type { GenerationRun } from '../src/pipeline/generation-run.js';
import { StableDiffusionPipeline } from '../src/pipeline/pipeline.js';
import type { CommonRequest } from '../src/pipeline/types.js';
import { tinyTokenizerFiles } from '../src/tiny/tiny-tokenizer.js';
import { ClipTokenizer } from '../src/tokenizer/clip-tokenizer.js';
import {
  MAX_PROMPT_WEIGHT,
  type PromptPiece,
  parsePromptAttention,
} from '../src/tokenizer/prompt-attention.js';
import { MAX_PROMPT_CHUNKS, promptChunks } from '../src/tokenizer/prompt-chunks.js';
import { tinyDir } from './helpers/tiny.js';

/** Pieces as A1111's docstring writes them: [text, weight], BREAK as ['BREAK', -1]. */
const pairs = (pieces: PromptPiece[]) =>
  pieces.map((p) => (p.kind === 'break' ? ['BREAK', -1] : [p.text, p.weight]));

describe('parsePromptAttention', () => {
  it("reads A1111's documented examples, BREAK and the weights it multiplies", () => {
    expect(pairs(parsePromptAttention('normal text'))).toEqual([['normal text', 1]]);
    expect(pairs(parsePromptAttention('an (important) word'))).toEqual([
      ['an ', 1],
      ['important', 1.1],
      [' word', 1],
    ]);
    expect(pairs(parsePromptAttention('(unbalanced'))).toEqual([['unbalanced', 1.1]]);
    expect(pairs(parsePromptAttention('\\(literal\\]'))).toEqual([['(literal]', 1]]);
    expect(pairs(parsePromptAttention('(unnecessary)(parens)'))).toEqual([['unnecessaryparens', 1.1]]);
    const got = pairs(parsePromptAttention('a (((house:1.3)) [on] a (hill:0.5), sun, (((sky))).'));
    const want: Array<[string, number]> = [
      ['a ', 1],
      ['house', 1.573],
      [' ', 1.1],
      ['on', 1],
      [' a ', 1.1],
      ['hill', 0.55],
      [', sun, ', 1.1],
      ['sky', 1.4641],
      ['.', 1.1],
    ];
    expect(got.map(([t]) => t)).toEqual(want.map(([t]) => t));
    for (const [i, [, w]] of got.entries()) expect(w).toBeCloseTo(want[i][1], 12);
    expect(pairs(parsePromptAttention('[word]'))).toEqual([['word', 1 / 1.1]]);
    expect(pairs(parsePromptAttention('a cat BREAK (a dog:0.5)'))).toEqual([
      ['a cat', 1],
      ['BREAK', -1],
      ['', 1],
      ['a dog', 0.5],
    ]);
    // BREAK only as a word of its own; a weight only where A1111's grammar has one.
    expect(pairs(parsePromptAttention('BREAKFAST, (a: 1.3), (b:1e308)'))).toEqual([
      ['BREAKFAST, ', 1],
      ['a: 1.3', 1.1],
      [', ', 1],
      ['b:1e308', 1.1],
    ]);
  });

  it('stays bounded and finite on hostile prompts, and never throws', () => {
    const deep = `${'('.repeat(10_000)}cat${')'.repeat(10_000)}`;
    const deepPieces = parsePromptAttention(deep);
    expect(pairs(deepPieces)).toEqual([['cat', MAX_PROMPT_WEIGHT]]);
    expect(pairs(parsePromptAttention(`(a:${'9'.repeat(400)})`))).toEqual([['a', MAX_PROMPT_WEIGHT]]);
    expect(pairs(parsePromptAttention('(a:-5000) [b'))).toEqual([
      ['a', -MAX_PROMPT_WEIGHT],
      [' ', 1],
      ['b', 1 / 1.1],
    ]);
    expect(pairs(parsePromptAttention('(a:1.2.3) (b:NaN) c)] \\x'))).toEqual([
      ['a:1.2.3', 1.1],
      [' ', 1],
      ['b:NaN', 1.1],
      [' c)] x', 1],
    ]);
    expect(pairs(parsePromptAttention(''))).toEqual([['', 1]]);
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom('(', ')', '[', ']', ':', '\\', '1', '.', 'é', '猫', ' ', 'BREAK'),
        }),
        (prompt) => {
          const pieces = parsePromptAttention(prompt);
          expect(pieces.length).toBeGreaterThan(0);
          for (const p of pieces)
            if (p.kind === 'text') expect(Math.abs(p.weight)).toBeLessThanOrEqual(MAX_PROMPT_WEIGHT);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('promptChunks', () => {
  const tokenizer = new ClipTokenizer(tinyTokenizerFiles());
  const cat = tokenizer.tokenize('cat')[0];
  const comma = tokenizer.commaId as number;

  it('cuts 75 tokens a chunk, each [bos, tokens, eos, padding], after a comma within the last 20 tokens', () => {
    const long = promptChunks(tokenizer, 'cat '.repeat(200), true);
    expect(long.ids.map((row) => row.length)).toEqual([77, 77, 77]);
    expect(long.ids[0]).toEqual([tokenizer.bosId, ...new Array(75).fill(cat), tokenizer.eosId]);
    expect(long.ids[2].slice(0, 52)).toEqual([tokenizer.bosId, ...new Array(50).fill(cat), tokenizer.eosId]);
    expect(long.truncated).toBe(false);
    // A comma at token 70: the five tokens after it move to the next chunk.
    const phrased = promptChunks(tokenizer, `${'cat '.repeat(69)}cat, ${'cat '.repeat(10)}`, true);
    expect(phrased.ids[0].slice(70, 73)).toEqual([cat, comma, tokenizer.eosId]);
    expect(phrased.ids[1].slice(0, 12)).toEqual([
      tokenizer.bosId,
      ...new Array(10).fill(cat),
      tokenizer.eosId,
    ]);
    const weighted = promptChunks(tokenizer, 'cat BREAK (cat:1.5)', true);
    expect(weighted.ids.map((row) => row.slice(0, 3))).toEqual([
      [tokenizer.bosId, cat, tokenizer.eosId],
      [tokenizer.bosId, cat, tokenizer.eosId],
    ]);
    expect(weighted.weights[1].slice(0, 3)).toEqual([1, 1.5, 1]);
    // Past MAX_PROMPT_CHUNKS the rest is cut; without weighting, past one chunk (diffusers).
    const huge = promptChunks(tokenizer, 'cat '.repeat(5000), true);
    expect(huge.ids).toHaveLength(MAX_PROMPT_CHUNKS);
    expect(huge.truncated).toBe(true);
    const plain = promptChunks(tokenizer, '(cat) '.repeat(200), false);
    expect(plain.ids).toHaveLength(1);
    expect(plain.truncated).toBe(true);
  });
});

/** The run fields the encode-prompt seam reads. */
function runFor(request: CommonRequest, params: Partial<GenerationRun['params']> = {}): GenerationRun {
  return {
    request,
    params: {
      clip_skip: 0,
      height: 32,
      width: 32,
      negative_prompt: request.negative_prompt ?? null,
      ...params,
    },
    guided: true,
    batch: 1,
    loraFor: () => undefined,
  } as unknown as GenerationRun;
}

describe('prompt weighting in the tiny pipelines (TF.js)', () => {
  const dirs: string[] = [];
  let sd: StableDiffusionPipeline;
  let sdxl: StableDiffusionPipeline;
  beforeAll(async () => {
    dirs.push(tinyDir('sd1'), tinyDir('sdxl'));
    sd = await StableDiffusionPipeline.fromPretrained(dirs[0], { backend: 'wasm', log: () => {} });
    sdxl = await StableDiffusionPipeline.fromPretrained(dirs[1], { backend: 'wasm', log: () => {} });
  }, 120_000);
  afterAll(() => {
    sd?.dispose();
    sdxl?.dispose();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const image = async (prompt: string, extra: Partial<CommonRequest> = {}) =>
    Buffer.from(
      (await sd.text2img({ prompt, negative_prompt: 'dog', num_inference_steps: 2, seed: 3, ...extra }))
        .images[0].data,
    );

  it('(word:1.0) is word; a weight changes the image; 200 tokens are read past the first 75', async () => {
    const plain = await image('a cat on mars');
    expect((await image('a (cat:1.0) on mars')).equals(plain)).toBe(true);
    expect((await image('a (cat:1.3) on mars')).equals(plain)).toBe(false);
    // The opt-out reads the brackets as text.
    expect((await image('a (cat:1.0) on mars', { prompt_weighting: false })).equals(plain)).toBe(false);
    const first75 = 'cat '.repeat(75);
    const long = `${first75}${'dog '.repeat(125)}`;
    expect((await image(long)).equals(await image(first75))).toBe(false);
    // The opt-out reads as diffusers: cut after 75 tokens.
    const cut = await image(long, { prompt_weighting: false });
    expect(cut.equals(await image(first75, { prompt_weighting: false }))).toBe(true);
  });

  it('weights scale the token states, restore the mean, and pad the negative to the prompt', async () => {
    const raw = await sd.textEncoder.encodeOnHost([sd.tokenizer.encode('a cat dog')]);
    const weighted = await sd.encodePrompt('a (cat:2) dog');
    expect(weighted.shape).toEqual(raw.shape);
    const width = raw.shape[2];
    const mean = (d: Float32Array) => d.reduce((a, b) => a + b, 0) / d.length;
    expect(mean(weighted.data)).toBeCloseTo(mean(raw.data), 5);
    // token 2 is `cat`: twice the scale of every other token's state.
    const scale = (t: number) => weighted.data[t * width] / raw.data[t * width];
    expect(scale(2) / scale(1)).toBeCloseTo(2, 4);
    expect(scale(3) / scale(1)).toBeCloseTo(1, 4);
    const long = 'cat '.repeat(200);
    const { conditioning } = await sdConditioning(sd, runFor({ prompt: long, negative_prompt: 'dog' }));
    expect(conditioning.context.shape).toEqual([2, 231, width]);
    const empty = await sd.encodePrompt('');
    const negativeTail = conditioning.context.data.subarray(77 * width, 154 * width);
    expect(Array.from(negativeTail)).toEqual(Array.from(empty.data));
  });

  it('SDXL: both encoders chunked alike, the pooled output from the first chunk, the negative padded', async () => {
    const first75 = 'cat '.repeat(75);
    const long = await sdxlConditioning(
      sdxl,
      sdxl.sdxl!,
      runFor({ prompt: `${first75}${'dog '.repeat(90)}`, negative_prompt: '(dog:1.2)' }),
      'text2img',
    );
    const short = await sdxlConditioning(
      sdxl,
      sdxl.sdxl!,
      runFor({ prompt: first75, negative_prompt: '' }),
      'text2img',
    );
    const width = short.conditioning.context.shape[2];
    expect(long.conditioning.context.shape).toEqual([2, 231, width]);
    // The positive row of the pooled embeds: of the first chunk alone (a batch of 3 rows may round differently).
    const pooled = ({ conditioning }: typeof long) => {
      const { data, shape } = conditioning.textTime!.textEmbeds;
      return data.subarray(data.length - shape[1]);
    };
    const drift = pooled(long).reduce((worst, v, i) => Math.max(worst, Math.abs(v - pooled(short)[i])), 0);
    expect(drift).toBeLessThan(1e-5);
    expect(long.promptTruncated).toBe(false);
  });
});
