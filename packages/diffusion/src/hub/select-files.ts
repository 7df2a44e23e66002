import { unsafeRelativePath } from '@tiffin/core/internal';

/**
 * Which files of a diffusers repository a Stable Diffusion (1.x/2.x/XL) pipeline needs: the configs, the
 * tokenizer(s) and one safetensors file per model component (SDXL: text_encoder_2 and tokenizer_2 too). Everything else (pickled .bin/.ckpt weights, fp16/ema
 * variants when the plain file exists, the safety checker, sample images) is skipped.
 */
const COMPONENTS_WITH_WEIGHTS = ['text_encoder', 'unet', 'vae'] as const;
/** SDXL's second encoder: fetched when the repository has one. */
const OPTIONAL_COMPONENTS_WITH_WEIGHTS = ['text_encoder_2'] as const;
const TOKENIZER_FILES = [
  'vocab.json',
  'merges.txt',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'tokenizer.json',
];
const CONFIG_FILES = new Set([
  'model_index.json',
  // Tiffin's own generation defaults, when a repository carries them.
  'tiffin_defaults.json',
  'scheduler/scheduler_config.json',
  'text_encoder/config.json',
  'text_encoder_2/config.json',
  'unet/config.json',
  'vae/config.json',
  ...TOKENIZER_FILES.flatMap((f) => [`tokenizer/${f}`, `tokenizer_2/${f}`]),
]);

export interface RepoFile {
  path: string;
  size: number;
}

export function selectPipelineFiles(listed: readonly RepoFile[]): RepoFile[] {
  // Names that are not plain relative paths (`..`, absolute, backslashes) are never candidates: the download
  // refuses them too, but a hostile listing must not even win the choice of a component's weights.
  const files = listed.filter((f) => unsafeRelativePath(f.path) === null);
  const selected = files.filter((f) => CONFIG_FILES.has(f.path));
  const missing: string[] = [];
  const optional = OPTIONAL_COMPONENTS_WITH_WEIGHTS.filter((c) =>
    files.some((f) => f.path === `${c}/config.json`),
  );
  for (const component of [...COMPONENTS_WITH_WEIGHTS, ...optional]) {
    const weights = files.filter(
      (f) => f.path.startsWith(`${component}/`) && f.path.endsWith('.safetensors'),
    );
    // Prefer the plain (full-precision) file, then fp16, then anything else (e.g. a single custom name).
    const pick =
      weights.find((f) => /\/(model|diffusion_pytorch_model)\.safetensors$/.test(f.path)) ??
      weights.find((f) => /\.fp16\.safetensors$/.test(f.path)) ??
      weights[0];
    if (pick) selected.push(pick);
    else missing.push(component);
  }
  if (!files.some((f) => f.path === 'model_index.json')) missing.unshift('model_index.json');
  if (missing.length > 0) {
    throw new Error(
      `The repository is not a diffusers Stable Diffusion pipeline with safetensors weights: missing ${missing.join(', ')}`,
    );
  }
  return selected;
}

/**
 * The files of a tiny autoencoder repository (diffusers `AutoencoderTiny` layout, e.g. TAESD): its `config.json`
 * and one safetensors file at the top (the full-precision one when there are several).
 */
export function selectTinyAutoencoderFiles(listed: readonly RepoFile[]): RepoFile[] {
  return selectConfigAndWeights(listed, 'a diffusers AutoencoderTiny');
}

/** A diffusers `ControlNetModel` repository (`lllyasviel/sd-controlnet-canny`): the same two files at its top. */
export function selectControlNetFiles(listed: readonly RepoFile[]): RepoFile[] {
  return selectConfigAndWeights(listed, 'a diffusers ControlNetModel');
}

/** `config.json` and the safetensors weights (f32, else f16) at a single-model repository's top. */
function selectConfigAndWeights(listed: readonly RepoFile[], what: string): RepoFile[] {
  const files = listed.filter((f) => unsafeRelativePath(f.path) === null && !f.path.includes('/'));
  const config = files.find((f) => f.path === 'config.json');
  const weights = files.filter((f) => f.path.endsWith('.safetensors'));
  const pick =
    weights.find((f) => f.path === 'diffusion_pytorch_model.safetensors') ??
    weights.find((f) => f.path === 'diffusion_pytorch_model.fp16.safetensors');
  if (!config || !pick)
    throw new Error(
      `The repository is not ${what} (config.json and diffusion_pytorch_model.safetensors at its top)`,
    );
  return [config, pick];
}
