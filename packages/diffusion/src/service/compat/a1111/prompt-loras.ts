/** A LoRA a prompt names, as A1111's `<lora:name:weight>`. */
export interface PromptLora {
  path: string;
  weight: number;
}

const LORA_TAG = /<lora:([^:<>]{1,256})(?::(-?\d+(?:\.\d+)?))?>/g;

/**
 * A1111's extra-network tags out of a prompt: `<lora:name:weight>` (weight 1 when left out) becomes the LoRA file
 * `name.safetensors` (or `name` when it names the extension) in the service's LoRA folders; the tags are removed
 * from the prompt the model sees, as A1111 does.
 */
export function promptLoras(prompt: string): { prompt: string; loras: PromptLora[] } {
  const loras: PromptLora[] = [];
  const cleaned = prompt.replace(LORA_TAG, (_tag, name: string, weight: string | undefined) => {
    const file = name.trim();
    loras.push({
      path: file.endsWith('.safetensors') ? file : `${file}.safetensors`,
      weight: weight === undefined ? 1 : Number(weight),
    });
    return '';
  });
  return { prompt: cleaned.replace(/\s{2,}/g, ' ').trim(), loras };
}
