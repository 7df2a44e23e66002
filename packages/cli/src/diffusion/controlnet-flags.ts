import { CLIException } from '@tiffin/core/internal';
import { resolveControlNet } from '@tiffin/diffusion';
import { downloadProgressBar } from '../download-progress.js';

/** A ControlNet's name as requests give it (`controlnet[].model`): a word of letters, digits, `.`, `_` and `-`. */
const NAME = /^[A-Za-z0-9][\w.-]{0,63}$/;

export const CONTROLNET_HELP =
  'ControlNet loaded beside the model, as name=<folder|.safetensors|hub id> (e.g. canny=lllyasviel/sd-controlnet-canny; a hub id is downloaded once); requests name it in controlnet[].model. Repeatable';

/** Commander's collector of the repeatable `--controlnet name=source`: each value checked and kept in order. */
export function collectControlNet(
  value: string,
  previous: Array<[string, string]> = [],
): Array<[string, string]> {
  const at = value.indexOf('=');
  const name = value.slice(0, Math.max(at, 0));
  const source = value.slice(at + 1);
  if (at <= 0 || source === '')
    throw new CLIException(`--controlnet takes name=<folder|file|hub id>, not ${JSON.stringify(value)}`);
  if (!NAME.test(name))
    throw new CLIException(
      `--controlnet name ${JSON.stringify(name)}: letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)`,
    );
  if (previous.some(([n]) => n === name)) throw new CLIException(`--controlnet ${name} is given twice`);
  return [...previous, [name, source]];
}

/** Each `--controlnet` as the folder or file it names, hub ids (their `main`) downloaded into the model store first. */
export async function resolveControlNets(
  pairs: ReadonlyArray<[string, string]> | undefined,
): Promise<{ controlnets: Record<string, string>; tags: string[] }> {
  const controlnets: Record<string, string> = {};
  const tags: string[] = [];
  for (const [name, source] of pairs ?? []) {
    const bar = downloadProgressBar();
    try {
      const resolved = await resolveControlNet({ modelId: source, onProgress: bar.update });
      bar.finish();
      if (resolved.downloaded) process.stderr.write(`Saved ControlNet ${resolved.tag} to the model store\n`);
      if (resolved.tag) tags.push(resolved.tag);
      controlnets[name] = resolved.dir;
    } catch (err) {
      bar.finish();
      throw err;
    }
  }
  return { controlnets, tags };
}
