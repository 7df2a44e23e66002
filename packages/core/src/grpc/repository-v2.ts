import type * as grpc from '@grpc/grpc-js';
import { grpcErrorAnswer } from '../errors/error-answer.js';
import { controlledModel, indexOf } from '../inference-protocol/repository-requests.js';
import type { Logger } from '../logging/logger.js';
import { newRequestId } from '../server/request-id.js';
import type { Service } from '../service/service.js';
import { rejectUndecodable } from './calls.js';

interface IndexRequest {
  ready?: boolean;
}
interface ControlRequest {
  model_name?: string;
  parameters?: Record<string, { bool_param?: boolean }>;
}

type Handler<Req, Res> = (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>) => void;

function answered<Req, Res>(
  logger: Logger,
  message: string,
  answer: (request: Req) => Promise<Res>,
): Handler<Req, Res> {
  return (call, callback) => {
    if (rejectUndecodable(call, callback, `inference.${message}`)) return;
    answer(call.request).then(
      (res) => callback(null, res),
      (err: unknown) => callback(grpcErrorAnswer(err, newRequestId(), logger)),
    );
  };
}

/**
 * The repository extension of `inference.GRPCInferenceService` (`RepositoryIndex`, `RepositoryModelLoad`,
 * `RepositoryModelUnload`, as Triton's proto names them), over the same control as the HTTP routes
 * (docs/model-repository.md). A service without a repository lists its models and loads nothing.
 */
export function repositoryV2Implementation(
  svc: Service,
  modelNames: () => Iterable<string>,
  isReady: () => boolean,
  logger: Logger,
): grpc.UntypedServiceImplementation {
  return {
    RepositoryIndex: answered<IndexRequest, unknown>(logger, 'RepositoryIndexRequest', async (req) => ({
      models: await indexOf(svc.modelRepository, modelNames(), isReady(), req.ready === true),
    })),
    RepositoryModelLoad: answered<ControlRequest, unknown>(
      logger,
      'RepositoryModelLoadRequest',
      async (req) => {
        const name = req.model_name ?? '';
        await controlledModel(svc.modelRepository, name).load(name);
        return {};
      },
    ),
    RepositoryModelUnload: answered<ControlRequest, unknown>(
      logger,
      'RepositoryModelUnloadRequest',
      async (req) => {
        const name = req.model_name ?? '';
        const unloadDependents = req.parameters?.unload_dependents?.bool_param === true;
        await controlledModel(svc.modelRepository, name).unload(name, { unloadDependents });
        return {};
      },
    ),
  };
}
