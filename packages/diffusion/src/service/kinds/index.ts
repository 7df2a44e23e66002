import { img2img } from './img2img.js';
import { inpaint } from './inpaint.js';
import type { GenerationKind, GenerationKindName } from './kind.js';
import { text2img } from './text2img.js';

export type { GenerationKind, GenerationKindName, GenerationRequest, KindContext } from './kind.js';

/** Every generation kind, in the order a service lists them. A new kind is one file here. */
export const GENERATION_KINDS: Readonly<Record<GenerationKindName, GenerationKind>> = {
  text2img,
  img2img,
  inpaint,
};

export const GENERATION_KIND_NAMES = Object.keys(GENERATION_KINDS) as GenerationKindName[];
