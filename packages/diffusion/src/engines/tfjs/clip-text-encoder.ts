import * as tf from '@tensorflow/tfjs';
import {
  type ClipTextConfig,
  clipFinalNorm,
  clipTextEmbeds,
  clipTextHiddenStates,
  eosPositions,
} from '../../architectures/clip-text.js';
import type { HostTensor } from '../../latents/host-tensor.js';
import type { LowRankBranchesByName } from '../../lora/types.js';
import type { WeightStore } from '../../weights/store.js';
import type { ComponentLora, TextEncoderEngine } from '../engine-models.js';
import type { ClipTextOutput, SdxlTextEncoding } from '../tensor-forms.js';
import { onTfjs } from './host-boundary.js';
import { branchesByTensor, withLowRankBranches } from './low-rank.js';
import { TfjsOps } from './tfjs-ops.js';

/** The CLIP text encoder (`architectures/clip-text.ts`) run eagerly on TF.js. */
export class ClipTextEncoder implements TextEncoderEngine {
  constructor(
    readonly config: ClipTextConfig,
    readonly weights: WeightStore,
  ) {}

  /**
   * Encode token ids [B][L]. `clipSkip` k > 0 returns final_layer_norm(hidden_states[-(k+1)]).
   * `lora`: low-rank branches added at run time (unfused LoRA), keyed by weight name.
   */
  encode(ids: readonly (readonly number[])[], clipSkip = 0, lora?: LowRankBranchesByName): ClipTextOutput {
    const w = (n: string) => this.weights.get(n);
    return withLowRankBranches(branchesByTensor(lora, w), () => this.forward(ids, clipSkip));
  }

  private forward(ids: readonly (readonly number[])[], clipSkip: number): ClipTextOutput {
    const c = this.config;
    const o = new TfjsOps((n) => this.weights.get(n));
    const last = tf.tidy(() => {
      const idT = tf.tensor2d(ids.flat(), [ids.length, ids[0].length], 'int32');
      const hidden = clipTextHiddenStates(o, c, idT, c.num_hidden_layers - clipSkip);
      return clipFinalNorm(o, c, hidden[hidden.length - 1]) as tf.Tensor3D;
    });
    return { lastHiddenState: last };
  }

  /**
   * SDXL's use of the encoder: the penultimate hidden state, and `text_embeds` when the weights project.
   * `lora`: low-rank branches added at run time (unfused LoRA), keyed by weight name.
   */
  encodeForSdxl(ids: readonly (readonly number[])[], lora?: LowRankBranchesByName): SdxlTextEncoding {
    const w = (n: string) => this.weights.get(n);
    return withLowRankBranches(branchesByTensor(lora, w), () => this.forwardSdxl(ids));
  }

  private forwardSdxl(ids: readonly (readonly number[])[]): SdxlTextEncoding {
    const c = this.config;
    const o = new TfjsOps((n) => this.weights.get(n));
    const project = this.weights.has('text_projection.weight');
    const [penultimate, textEmbeds] = tf.tidy(() => {
      const idT = tf.tensor2d(ids.flat(), [ids.length, ids[0].length], 'int32');
      const hidden = clipTextHiddenStates(o, c, idT);
      const last = hidden[hidden.length - 1];
      const pooled = project
        ? [clipTextEmbeds(o, c, last, tf.tensor1d(eosPositions(c, ids), 'int32')) as tf.Tensor2D]
        : [];
      return [hidden[hidden.length - 2] as tf.Tensor3D, ...pooled];
    });
    return { penultimate: penultimate as tf.Tensor3D, textEmbeds: textEmbeds as tf.Tensor2D | undefined };
  }

  async encodeOnHost(
    ids: readonly (readonly number[])[],
    clipSkip = 0,
    lora?: ComponentLora,
  ): Promise<HostTensor> {
    const branches = lora?.runtime.component(lora.component);
    return (await onTfjs([], () => ({ ...this.encode(ids, clipSkip, branches) }))).lastHiddenState;
  }

  async encodeForSdxlOnHost(
    ids: readonly (readonly number[])[],
    lora?: ComponentLora,
  ): Promise<{ penultimate: HostTensor; textEmbeds: HostTensor | undefined }> {
    const branches = lora?.runtime.component(lora.component);
    const out = await onTfjs([], () => ({ ...this.encodeForSdxl(ids, branches) }));
    return { penultimate: out.penultimate, textEmbeds: out.textEmbeds };
  }

  dispose(): void {
    this.weights.dispose();
  }
}
