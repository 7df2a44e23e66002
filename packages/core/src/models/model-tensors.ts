import type { Context } from '../context/context.js';
import { Tensors } from '../io/descriptors/tensors.js';
import type { NamedTensors } from '../signature/named-tensors.js';
import type { ModelSignature } from '../signature/signature.js';
import type { ProtoPayload } from '../wire/proto/messages.js';
import type { Tensor } from '../wire/v2/tensor.js';
import { admitRun, type ModelRequest, type RequestLimits } from './run-admission.js';

/**
 * The named-tensors input of a zero-code model with several inputs or outputs: `Tensors` over the signature's
 * inputs, each request then admitted to the run (`admitRun`) with the server's limits.
 */
export class ModelTensors extends Tensors {
  constructor(
    model: string,
    private readonly signature: ModelSignature,
  ) {
    super({ model, tensors: signature.inputs });
  }

  override async fromHttpRequest(request: ModelRequest): Promise<NamedTensors> {
    return this.admitted(await super.fromHttpRequest(request), request.limits);
  }

  override async fromTensors(tensors: readonly Tensor[], ctx?: Context): Promise<NamedTensors> {
    return this.admitted(await super.fromTensors(tensors), ctx?.request.limits);
  }

  override async fromProto(
    message: ProtoPayload | Uint8Array,
    limits?: RequestLimits,
  ): Promise<NamedTensors> {
    return this.admitted(await super.fromProto(message, limits), limits);
  }

  private admitted(inputs: NamedTensors, limits: RequestLimits): NamedTensors {
    admitRun(this.model, this.signature, inputs, limits);
    return inputs;
  }
}
