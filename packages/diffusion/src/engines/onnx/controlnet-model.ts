import type { OrtModule } from '@tiffin/onnx';
import type { InferenceSession, Tensor as OrtTensor } from 'onnxruntime-node';
import { controlNetResidualChannels } from '../../architectures/controlnet.js';
import { type ControlNetConfig, controlNetTimeInputs } from '../../architectures/controlnet-config.js';
import type { HostTensor } from '../../latents/host-tensor.js';
import type { ControlNetEngine, HostControlResiduals, HostTextTime } from '../engine-models.js';
import { CONTROLNET_INPUTS, CONTROLNET_MID_OUTPUT, controlNetDownOutput } from './controlnet-graph.js';

const ortOf = (ort: OrtModule, h: HostTensor): OrtTensor => new ort.Tensor('float32', h.data, [...h.shape]);
const hostOf = (t: OrtTensor): HostTensor => ({ data: (t.data as Float32Array).slice(), shape: [...t.dims] });

/** A ControlNet on an onnxruntime session (`controlnet-graph.ts`), host arrays in and out. */
export class OnnxControlNet implements ControlNetEngine {
  constructor(
    readonly config: ControlNetConfig,
    private readonly ort: OrtModule,
    private readonly session: InferenceSession,
  ) {}

  async residualsOnHost(
    sample: HostTensor,
    timestep: number,
    context: HostTensor,
    image: HostTensor,
    textTime?: HostTextTime,
  ): Promise<HostControlResiduals> {
    const c = this.config;
    const time = controlNetTimeInputs(c, timestep, textTime?.timeIds);
    const feeds: Record<string, OrtTensor> = {
      [CONTROLNET_INPUTS.sample]: ortOf(this.ort, sample),
      [CONTROLNET_INPUTS.image]: ortOf(this.ort, image),
      [CONTROLNET_INPUTS.context]: ortOf(this.ort, context),
      [CONTROLNET_INPUTS.timeProj]: ortOf(this.ort, time.timeProj),
    };
    if (textTime && time.timeIds) {
      feeds[CONTROLNET_INPUTS.textEmbeds] = ortOf(this.ort, textTime.textEmbeds);
      feeds[CONTROLNET_INPUTS.timeIds] = ortOf(this.ort, time.timeIds);
    }
    const out = await this.session.run(feeds);
    const down = controlNetResidualChannels(c).map((_, k) => hostOf(out[controlNetDownOutput(k)]));
    const mid = hostOf(out[CONTROLNET_MID_OUTPUT]);
    for (const t of Object.values(out)) t.dispose();
    return { down, mid };
  }

  dispose(): void {
    void this.session.release();
  }
}
