import * as tf from '@tensorflow/tfjs';
import { type ClipTextConfig, clipFinalNorm, clipTextHiddenStates } from '../architectures/clip-text.js';
import { branchesByTensor, type LowRankBranchesByName, withLowRankBranches } from '../ops/tfjs/low-rank.js';
import { TfjsOps } from '../ops/tfjs/tfjs-ops.js';
import type { WeightStore } from '../weights/store.js';

export interface ClipTextOutput {
  /** [B, L, D] after the final LayerNorm. */
  lastHiddenState: tf.Tensor3D;
}

/** The CLIP text encoder (`architectures/clip-text.ts`) run eagerly on TF.js. */
export class ClipTextEncoder {
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

  dispose(): void {
    this.weights.dispose();
  }
}
