import type * as grpc from '@grpc/grpc-js';
import type { ResponseCacheDeps } from '../cache/api-cache.js';
import { grpcErrorAnswer } from '../errors/error-answer.js';
import { NotFound, truncateForMessage } from '../errors/index.js';
import type {
  ModelInferRequestMessage,
  ModelInferResponseMessage,
  ModelRequestMessage,
} from '../inference-protocol/grpc-messages.js';
import { inferRequestFromProto, inferResponseToProto } from '../inference-protocol/grpc-tensors.js';
import {
  type ModelAdapter,
  modelAdapterFor,
  modelMetadata,
  protocolModels,
  serverMetadata,
} from '../inference-protocol/models.js';
import { protocolModelReady } from '../inference-protocol/repository-requests.js';
import type { Logger } from '../logging/logger.js';
import { v2CallOptions } from '../runtime/admission/call-options.js';
import type { Runtime } from '../runtime/runtime.js';
import { newRequestId } from '../server/request-id.js';
import { GrpcAnswerCache, inferKey } from './answer-cache.js';
import { grpcCallOptions } from './call-options.js';
import { type ApiCallDeps, rejectUndecodable, runApiCall } from './calls.js';
import { INFERENCE_V2_SERVICE_NAME } from './proto.js';
import { repositoryV2Implementation } from './repository-v2.js';

/** Methods that stay open with a token set, like `/v2/health/*` over HTTP (orchestrator probes). */
export const INFERENCE_V2_PROBE_METHODS: ReadonlySet<string> = new Set([
  `/${INFERENCE_V2_SERVICE_NAME}/ServerLive`,
  `/${INFERENCE_V2_SERVICE_NAME}/ServerReady`,
]);

export interface InferenceV2Deps extends ApiCallDeps {
  runtime: Runtime;
  /** Started and not draining (the service's readiness checks are added here). */
  isReady: () => boolean;
  /** The service's response cache (the HTTP server's, APIs with `cache`), or undefined. */
  cache?: ResponseCacheDeps | undefined;
}

type Handler<Req, Res> = (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>) => void;

/** A metadata method: the request checked for decodability, the answer computed at once. */
function unary<Req, Res>(logger: Logger, message: string, answer: (request: Req) => Res): Handler<Req, Res> {
  return (call, callback) => {
    if (rejectUndecodable(call, callback, `inference.${message}`)) return;
    try {
      callback(null, answer(call.request));
    } catch (err) {
      callback(grpcErrorAnswer(err, newRequestId(), logger));
    }
  };
}

/**
 * `inference.GRPCInferenceService`: the Open Inference Protocol over gRPC, a thin adapter over the HTTP
 * form's model mapping (`protocolModels`, the shared `InferRequest`, output selection) and over the
 * runtime (gate, deadline, batching), like Tiffin's own `Call`.
 */
export function inferenceV2Implementation(deps: InferenceV2Deps): grpc.UntypedServiceImplementation {
  const { svc, runtime, logger } = deps;
  // As `/v2/health/ready`: started, not draining, and every readiness check of the service passing.
  const isReady = () => deps.isReady() && svc.notReadyReason() === null;
  const models = protocolModels(svc);
  const cached = deps.cache ? new GrpcAnswerCache(deps.cache, 'v2-grpc') : undefined;
  svc.watchApis((api) => {
    const model = modelAdapterFor(api);
    if (model && !models.has(model.name)) models.set(model.name, model);
  });

  /** The model a request names; an unknown one (or a version, which Tiffin's models do not have) → NOT_FOUND. */
  const modelNamed = (name: string | undefined, version: string | undefined): ModelAdapter => {
    const model = models.get(name ?? '');
    if (!model) throw new NotFound(`Model '${truncateForMessage(name ?? '')}' is not served here`);
    if (version) {
      throw new NotFound(
        `Model '${model.name}' has no version '${truncateForMessage(version)}' (leave version empty)`,
      );
    }
    return model;
  };

  const ModelInfer: Handler<ModelInferRequestMessage, ModelInferResponseMessage> = (call, callback) => {
    if (rejectUndecodable(call, callback, 'inference.ModelInferRequest')) return;
    const message = call.request;
    const name = message.model_name ?? '';
    runApiCall(deps, name, call, callback, async (start) => {
      const model = modelNamed(name, message.model_version);
      const infer = inferRequestFromProto(message);
      const apiCall = start(model.api);
      grpcCallOptions(apiCall, call);
      v2CallOptions(apiCall, infer.request.parameters);
      const compute = async () =>
        inferResponseToProto(
          model.name,
          infer,
          await runtime.call(model.api, apiCall, infer.request, model.codec),
        );
      // An API with `cache` answers a repeated request from it (docs/cache.md, other protocols).
      return cached ? cached.answer(model.api, inferKey(infer), call, compute) : compute();
    });
  };

  return {
    ServerLive: unary(logger, 'ServerLiveRequest', () => ({ live: true })),
    ServerReady: unary(logger, 'ServerReadyRequest', () => ({ ready: isReady() })),
    ModelReady: unary<ModelRequestMessage, { ready: boolean }>(logger, 'ModelReadyRequest', (req) => {
      const model = modelNamed(req.name, req.version);
      return { ready: protocolModelReady(svc, model.name, isReady()) };
    }),
    // gRPC carries tensors as raw bytes natively; the HTTP-only binary_tensor_data extension is not announced.
    ServerMetadata: unary(logger, 'ServerMetadataRequest', () => serverMetadata(svc, [])),
    ModelMetadata: unary<ModelRequestMessage, ReturnType<typeof modelMetadata>>(
      logger,
      'ModelMetadataRequest',
      (req) => modelMetadata(modelNamed(req.name, req.version)),
    ),
    ModelInfer,
    ...repositoryV2Implementation(svc, () => models.keys(), isReady, logger),
  } as grpc.UntypedServiceImplementation;
}
