import { InvalidArgument } from '@tiffin/core';
import type { ComponentLora } from '../engines/engine-models.js';
import { concat, type HostTensor, hostTensor, repeatBatch } from '../latents/host-tensor.js';
import type { ClipTokenizer } from '../tokenizer/clip-tokenizer.js';
import { promptChunks } from '../tokenizer/prompt-chunks.js';
import type { SdxlComponents, TextEncoderModel } from './components.js';
import type { Conditioning } from './denoise.js';
import type { GenerationRun } from './generation-run.js';
import type { PipelineKind } from './parameters.js';
import { emphasize, longest, padWithEmpty } from './prompt-emphasis.js';
import { sdxlTimeIds } from './sdxl-time-ids.js';
import type { CommonRequest } from './types.js';

/** What the encode-prompt seam reads with: the first tokenizer and text encoder, SDXL's second pair. */
export interface PromptEncoders {
  readonly tokenizer: ClipTokenizer;
  readonly textEncoder: TextEncoderModel;
}

/** The UNet's conditioning, and whether the prompt was cut (`GenerationResult.promptTruncated`). */
export interface EncodedConditioning {
  conditioning: Conditioning;
  promptTruncated: boolean;
}

interface EncodedPrompt {
  embeds: HostTensor;
  truncated: boolean;
}

/**
 * One prompt's embeddings `[1, 77·chunks, D]` on an SD 1.x/2.x encoder (docs/spec/diffusion.md §3.1): its chunks
 * (`promptChunks`) encoded as one batch, then weighted (`emphasize`).
 */
export async function encodeSdPrompt(
  encoders: PromptEncoders,
  text: string,
  clipSkip: number,
  lora: ComponentLora | undefined,
  weighting: boolean,
): Promise<EncodedPrompt> {
  const chunks = promptChunks(encoders.tokenizer, text, weighting);
  const hidden = await encoders.textEncoder.encodeOnHost(chunks.ids, clipSkip, lora);
  return { embeds: emphasize(hidden, chunks.weights), truncated: chunks.truncated };
}

/**
 * Negative and positive embeddings of one length: the shorter padded with the encoding of an empty prompt
 * (`empty`, computed only when needed), as A1111 pads them.
 */
async function sameLength(
  negative: HostTensor,
  positive: HostTensor,
  empty: () => Promise<HostTensor>,
): Promise<[HostTensor, HostTensor]> {
  const length = longest(negative, positive);
  if (negative.shape[1] === positive.shape[1]) return [negative, positive];
  const pad = await empty();
  return [padWithEmpty(negative, length, pad), padWithEmpty(positive, length, pad)];
}

/** The encode-prompt seam: [negative, positive] embeddings (negative first, docs/spec/diffusion.md §8.1), per image. */
export async function sdConditioning(
  encoders: PromptEncoders,
  run: GenerationRun,
): Promise<EncodedConditioning> {
  const { request, params } = run;
  const weighting = params.prompt_weighting ?? true;
  const lora = run.loraFor('text_encoder');
  const encode = (text: string) => encodeSdPrompt(encoders, text, params.clip_skip, lora, weighting);
  const embed = async (text: string | null | undefined, given: CommonRequest['prompt_embeds']) =>
    given ? { embeds: hostTensor(given.data, given.shape), truncated: false } : await encode(text ?? '');
  const positive = await embed(request.prompt, request.prompt_embeds);
  const repeat = (t: HostTensor) => repeatBatch(t, run.batch);
  const promptTruncated = positive.truncated;
  if (!run.guided) return { conditioning: { context: repeat(positive.embeds) }, promptTruncated };
  const negative = await embed(params.negative_prompt, request.negative_prompt_embeds);
  const [n, p] = await sameLength(negative.embeds, positive.embeds, async () => (await encode('')).embeds);
  return { conditioning: { context: concat([repeat(n), repeat(p)]) }, promptTruncated };
}

/**
 * SDXL's encode-prompt seam (diffusers' StableDiffusionXLPipeline.encode_prompt): encoder 1 reads the prompt,
 * encoder 2 `prompt_2` (default: the prompt), each in chunks weighted as A1111 (docs/spec/diffusion.md §3.1); their
 * penultimate states side by side are the context, encoder 2's projected pooled output of the first chunk and the
 * micro-conditioning time ids (`sdxlTimeIds`) the UNet's added conditioning. Without a negative prompt and with
 * `force_zeros_for_empty_prompt`, the negative conditioning is zeros.
 */
export async function sdxlConditioning(
  encoders: PromptEncoders,
  sdxl: SdxlComponents,
  run: GenerationRun,
  kind: PipelineKind,
): Promise<EncodedConditioning> {
  const { request, params } = run;
  if (request.prompt_embeds || request.negative_prompt_embeds)
    throw new InvalidArgument('prompt_embeds are not supported for SDXL (it also needs pooled embeddings)');
  if (params.clip_skip > 0) throw new InvalidArgument('clip_skip is not supported for SDXL');
  const weighting = params.prompt_weighting ?? true;
  const pairs = [
    { tokenizer: encoders.tokenizer, encoder: encoders.textEncoder, lora: run.loraFor('text_encoder') },
    { tokenizer: sdxl.tokenizer2, encoder: sdxl.textEncoder2, lora: run.loraFor('text_encoder_2') },
  ] as const;
  const encodeWith = async ({ tokenizer, encoder, lora }: (typeof pairs)[number], text: string) => {
    const chunks = promptChunks(tokenizer, text, weighting);
    const out = await encoder.encodeForSdxlOnHost(chunks.ids, lora);
    const empty = async () => (await encoder.encodeForSdxlOnHost([tokenizer.encode('')], lora)).penultimate;
    return { ...out, embeds: emphasize(out.penultimate, chunks.weights), truncated: chunks.truncated, empty };
  };
  // `text2 || text`: an empty second prompt counts as not given, as diffusers' `prompt_2 or prompt`.
  const encode = async (text: string, text2: string | null | undefined) => {
    const one = await encodeWith(pairs[0], text);
    const two = await encodeWith(pairs[1], text2 || text);
    if (!two.textEmbeds) throw new InvalidArgument('text_encoder_2 has no text_projection');
    // prompt and prompt_2 may need different numbers of chunks: each encoder's shorter one takes its empty chunks.
    const length = longest(one.embeds, two.embeds);
    const pad = async (e: typeof one) =>
      e.embeds.shape[1] === length ? e.embeds : padWithEmpty(e.embeds, length, await e.empty());
    const pooledWidth = two.textEmbeds.shape[1];
    return {
      context: concat([await pad(one), await pad(two)], -1),
      pooled: hostTensor(two.textEmbeds.data.slice(0, pooledWidth), [1, pooledWidth]),
      truncated: one.truncated || two.truncated,
    };
  };
  const positive = await encode(request.prompt ?? '', params.prompt_2);
  const zeros = request.negative_prompt == null && sdxl.forceZerosForEmptyPrompt;
  const zerosLike = (t: HostTensor): HostTensor => ({
    data: new Float32Array(t.data.length),
    shape: t.shape,
  });
  let negative = !run.guided
    ? null
    : zeros
      ? { context: zerosLike(positive.context), pooled: zerosLike(positive.pooled) }
      : await encode(params.negative_prompt ?? '', params.negative_prompt_2);
  if (negative) {
    const [n, p] = await sameLength(
      negative.context,
      positive.context,
      async () => (await encode('', null)).context,
    );
    negative = { ...negative, context: n };
    positive.context = p;
  }
  const repeat = (t: HostTensor) => repeatBatch(t, run.batch);
  const both = (n: HostTensor | undefined, p: HostTensor) => (n ? concat([repeat(n), repeat(p)]) : repeat(p));
  const ids = sdxlTimeIds(params, kind);
  const rows = (row: number[]) => Array.from({ length: run.batch }, () => row);
  const timeIds = negative ? [...rows(ids.negative), ...rows(ids.positive)] : rows(ids.positive);
  return {
    conditioning: {
      context: both(negative?.context, positive.context),
      textTime: { textEmbeds: both(negative?.pooled, positive.pooled), timeIds },
    },
    promptTruncated: positive.truncated,
  };
}
