import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgument } from '@tiffin/core';
import { INPAINT_UNET_CHANNELS } from '../pipeline/stable-diffusion/inpaint.js';
import { GENERATION_KIND_NAMES, type GenerationKindName } from './kinds/index.js';

/**
 * The kinds to serve: the option's (duplicates dropped), else every kind, or inpainting
 * alone for an inpainting UNet.
 */
export function servedKinds(
  modelDir: string,
  option: GenerationKindName | readonly GenerationKindName[] | undefined,
): GenerationKindName[] {
  if (option !== undefined) {
    const list: readonly string[] = typeof option === 'string' ? [option] : option;
    for (const k of list)
      if (!(GENERATION_KIND_NAMES as readonly string[]).includes(k))
        throw new InvalidArgument(
          `pipeline ${JSON.stringify(k)} is not one of ${GENERATION_KIND_NAMES.join(', ')}`,
        );
    if (list.length === 0) throw new InvalidArgument('pipeline lists no generation API to serve');
    return GENERATION_KIND_NAMES.filter((k) => list.includes(k));
  }
  return unetInChannels(modelDir) === INPAINT_UNET_CHANNELS ? ['inpaint'] : [...GENERATION_KIND_NAMES];
}

/** The UNet's input channels from its config (4 when it does not say). */
function unetInChannels(modelDir: string): number {
  const path = join(modelDir, 'unet', 'config.json');
  if (!existsSync(path)) return 4;
  try {
    const config = JSON.parse(readFileSync(path, 'utf8')) as { in_channels?: unknown };
    return typeof config.in_channels === 'number' ? config.in_channels : 4;
  } catch {
    return 4;
  }
}
