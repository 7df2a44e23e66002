/**
 * Every `code` an error body (or a gRPC status's error) of any Tiffin package can carry, in one table: the
 * HTTP status it answers with, the error class that raises it and what it means. docs/errors.md lists each
 * one, and `test/repo/error-codes.test.ts` holds the sources and that page to this table, so a new code is
 * added here first. The gRPC status follows from the HTTP status (`grpcStatusForHttp`) unless `grpc` says
 * otherwise; `grpcStatusOfCode` reads it.
 */
import { ADMISSION_CODES } from './admission-codes.js';
import { GrpcStatus, type GrpcStatusCode, type GrpcStatusName, grpcStatusForHttp } from './grpc-status.js';

export interface ErrorCodeEntry {
  /** The HTTP status the code answers with. */
  readonly status: number;
  /** The error class (the body's `type`) that raises it. */
  readonly type: string;
  /** The package whose code raises it. */
  readonly package: string;
  /** The gRPC status, where it is not the one the HTTP status maps to. */
  readonly grpc?: GrpcStatusName;
  /** What the client did, or what went wrong, in one line. */
  readonly meaning: string;
}

const core = '@tiffin/core';

export const ERROR_CODES = {
  // The catalog's classes (packages/core/src/errors/index.ts), one code each.
  INVALID_ARGUMENT: {
    status: 400,
    type: 'InvalidArgument',
    package: core,
    meaning: 'an argument, option or model file is not usable',
  },
  BAD_INPUT: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: "the request could not be turned into the API's input",
  },
  UNAUTHORIZED: {
    status: 401,
    type: 'Unauthorized',
    package: core,
    meaning: 'no bearer token, or the wrong one',
  },
  NOT_FOUND: { status: 404, type: 'NotFound', package: core, meaning: 'no such route, API or model' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    type: 'MethodNotAllowed',
    package: core,
    meaning: 'the route exists, the method does not',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    type: 'RequestTimeout',
    package: core,
    meaning: 'the request body did not arrive in time',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    type: 'PayloadTooLarge',
    package: core,
    meaning: 'the body, or a size it declares, is over a limit',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    type: 'UnsupportedMediaType',
    package: core,
    meaning: "the body's content type is not one the API reads",
  },
  UNPROCESSABLE_ENTITY: {
    status: 422,
    type: 'UnprocessableEntity',
    package: core,
    meaning: 'the input parsed but is not valid for the API',
  },
  TOO_MANY_REQUESTS: {
    status: 429,
    type: 'TooManyRequests',
    package: core,
    meaning: 'a rate limit refused the request',
  },
  INTERNAL_ERROR: {
    status: 500,
    type: 'InternalServerError',
    package: core,
    meaning: 'something failed on the server; the log has the details under the request id',
  },
  NOT_IMPLEMENTED: {
    status: 500,
    type: 'NotImplementedError',
    package: core,
    meaning: 'the feature is not implemented',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    type: 'ServiceUnavailable',
    package: core,
    meaning: 'starting, draining or at the concurrency limit; retry after `Retry-After`',
  },
  DEADLINE_EXCEEDED: {
    status: 504,
    type: 'GatewayTimeout',
    package: core,
    meaning: 'the answer did not start within the timeout',
  },
  CANCELLED: {
    status: 409,
    type: 'Cancelled',
    package: core,
    grpc: 'CANCELLED',
    meaning: 'the work was cancelled (a task by id, a generation whose client left)',
  },
  MISSING_DEPENDENCY: {
    status: 500,
    type: 'MissingDependencyException',
    package: core,
    meaning: 'an optional package a feature needs is not installed; the message names it',
  },
  CONFIG_ERROR: {
    status: 500,
    type: 'ConfigError',
    package: core,
    meaning: 'the service or server is configured wrongly',
  },
  CLI_ERROR: { status: 500, type: 'CLIException', package: core, meaning: 'a CLI command cannot go on' },
  IMPORT_SERVICE_ERROR: {
    status: 500,
    type: 'ImportServiceError',
    package: core,
    meaning: 'the service module cannot be loaded',
  },

  // Finer codes of core.
  TENSOR_DTYPE_MISMATCH: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: "a value cannot become the input's dtype without changing kind",
  },
  TENSOR_RANK_MISMATCH: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: 'a tensor has another number of dimensions than the input',
  },
  TENSOR_SHAPE_MISMATCH: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: "a tensor's shape does not fit the input's",
  },
  UNKNOWN_TENSOR: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: 'a tensor the model has no input for',
  },
  MISSING_TENSOR: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: 'an input of the model is not given',
  },
  TENSORS_NOT_AN_OBJECT: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: 'named tensors were not sent as one JSON object',
  },
  TENSOR_NOT_AN_ARRAY: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: 'a named tensor is not a (nested) array',
  },
  TENSOR_BATCH_MISMATCH: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: 'the tensors of one request have different batch sizes',
  },
  DUPLICATE_TENSOR: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: 'a tensor is given twice',
  },
  BATCH_QUEUE_FULL: {
    status: 503,
    type: 'ServiceUnavailable',
    package: core,
    meaning: 'the batch queue cannot serve the request within its latency budget; retry after `Retry-After`',
  },
  // The API queues' refusals and the client's deadline (admission-codes.ts).
  ...ADMISSION_CODES,
  MODEL_RUN_FAILED: {
    status: 500,
    type: 'ModelRunFailed',
    package: core,
    meaning: 'the model runtime failed on a well-formed input',
  },
  MODEL_NOT_IN_REPOSITORY: {
    status: 404,
    type: 'NotFound',
    package: core,
    meaning: 'the model repository has no model of that name (or the name is not one a repository serves)',
  },
  MODEL_CONTROL_DISABLED: {
    status: 400,
    type: 'InvalidArgument',
    package: core,
    meaning:
      'model control is off (`--model-control none`): the repository loads and unloads nothing on request',
  },
  MODEL_LOAD_FAILED: {
    status: 400,
    type: 'InvalidArgument',
    package: core,
    meaning:
      'the model could not be loaded (the message and the index `reason` say why); the one serving stays',
  },
  MODEL_NOT_LOADED: {
    status: 503,
    type: 'ServiceUnavailable',
    package: core,
    meaning: 'the model is unloaded (or unloading); load it, or retry once it is back',
  },
  TASK_ID_REQUIRED: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: 'a task route was called without exactly one `?id=`',
  },
  TASK_ID_INVALID: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: 'the task id is longer than any id the server hands out',
  },
  WEBHOOK_URL_REFUSED: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning:
      "the task's webhook URL (`Tiffin-Webhook-Url`) is not an http(s) URL to a host (and path) `--webhook-allow` names, or carries credentials, or no webhook secret is set",
  },
  JOB_NOT_FOUND: {
    status: 404,
    type: 'TaskNotFound',
    package: core,
    meaning: 'no task with that id (never submitted, or expired)',
  },
  JOB_NOT_DONE: {
    status: 409,
    type: 'TaskNotDone',
    package: core,
    grpc: 'FAILED_PRECONDITION',
    meaning: 'the task has no result yet, or failed',
  },
  ANSWER_TOO_LARGE: {
    status: 422,
    type: 'AnswerTooLarge',
    package: core,
    meaning: 'the answer would hold more values than maxAnswerElements (counted before encoding)',
  },
  RUNNER_QUEUE_FULL: {
    status: 503,
    type: 'ServiceUnavailable',
    package: core,
    meaning: "as many calls wait for the model's runner threads as may; retry after Retry-After",
  },
  BODY_BUDGET_FULL: {
    status: 503,
    type: 'ServiceUnavailable',
    package: core,
    meaning:
      "the request bodies held across calls are at the server's maxBufferedBytes; retry after Retry-After",
  },
  TENSOR_SHAPE_TOO_LARGE: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning: 'a tensor shape declares more elements than any tensor may hold',
  },
  TENSOR_EMPTY_DIMENSION: {
    status: 400,
    type: 'BadInput',
    package: core,
    meaning:
      "a model input has size 0 in a dimension the model cannot run empty (any but a batchable model's batch dimension)",
  },
  JOBS_CLIENT_FULL: {
    status: 429,
    type: 'TasksClientFull',
    package: core,
    meaning: "one client holds its share of the task store's unfinished tasks; retry after Retry-After",
  },
  TASK_STORE_UNAVAILABLE: {
    status: 503,
    type: 'TaskStoreUnavailable',
    package: core,
    meaning: 'the task store (Redis) cannot be reached; nothing was accepted, retry after Retry-After',
  },
  TASK_INTERRUPTED: {
    status: 503,
    type: 'TaskInterrupted',
    package: core,
    meaning: "a task's process stopped while it ran and it has no attempt left",
  },
  JOBS_FULL: {
    status: 503,
    type: 'TasksFull',
    package: core,
    meaning: 'the task store holds as many pending tasks as it may',
  },
  TASK_RESULT_TOO_LARGE: {
    status: 507,
    type: 'TaskResultTooLarge',
    package: core,
    meaning: "a task's result is larger than the store keeps",
  },

  // @tiffin/build
  CONTAINER_TOOL_NOT_FOUND: {
    status: 500,
    type: 'ContainerToolNotFound',
    package: '@tiffin/build',
    meaning: 'no container tool (docker, podman, buildah) is installed',
  },
  CONTAINER_BUILD_FAILED: {
    status: 500,
    type: 'TiffinError',
    package: '@tiffin/build',
    meaning: 'the container tool exited with an error; the message carries its last lines',
  },

  // @tiffin/onnx and @tiffin/tfjs
  ONNX_UNSUPPORTED: {
    status: 400,
    type: 'InvalidArgument',
    package: '@tiffin/onnx',
    meaning: 'the ONNX model uses a type or shape Tiffin cannot serve',
  },
  ONNX_MODEL_INVALID: {
    status: 400,
    type: 'InvalidArgument',
    package: '@tiffin/onnx',
    meaning: 'the file is not an ONNX model onnxruntime can load',
  },
  TFJS_MODEL_INVALID: {
    status: 400,
    type: 'InvalidArgument',
    package: '@tiffin/tfjs',
    meaning: 'the folder is not a TensorFlow.js model, or uses an operation TF.js cannot run',
  },

  // @tiffin/diffusion
  NOT_ACCEPTABLE: {
    status: 406,
    type: 'NotAcceptable',
    package: '@tiffin/diffusion',
    meaning: 'Accept names no image format the API makes (jpeg, png, webp)',
  },
  BAD_CHECKPOINT: {
    status: 400,
    type: 'SingleFileError',
    package: '@tiffin/diffusion',
    meaning: 'the single-file checkpoint is not an SD 1.x/2.x/XL file',
  },
  PICKLE_REFUSED: {
    status: 400,
    type: 'SingleFileError',
    package: '@tiffin/diffusion',
    meaning: 'the checkpoint is a Python pickle, which is never opened',
  },
  MODEL_FOLDER: {
    status: 500,
    type: 'ModelFolderError',
    package: '@tiffin/diffusion',
    meaning: 'the model folder is not a usable diffusers folder (missing or invalid files)',
  },
  SAFETENSORS: {
    status: 500,
    type: 'SafetensorsError',
    package: '@tiffin/diffusion',
    meaning: 'a safetensors file cannot be read (missing, truncated, invalid header)',
  },
  MODEL_TOO_LARGE: {
    status: 500,
    type: 'ModelTooLargeError',
    package: '@tiffin/diffusion',
    meaning: "the model's weights do not fit the chosen backend's memory; refused at start",
  },
  LORA_PATH: {
    status: 400,
    type: 'LoraPathError',
    package: '@tiffin/diffusion',
    meaning: 'a LoRA the request names does not exist or lies outside every allowed folder',
  },
  QUEUE_FULL: {
    status: 503,
    type: 'QueueFullError',
    package: '@tiffin/diffusion',
    meaning: 'the generation queue is full; retry after `Retry-After`',
  },
  INVALID_VALUE: {
    status: 400,
    type: 'BadInput',
    package: '@tiffin/diffusion',
    meaning: "a request field's value is out of range or not one the API takes (OpenAI's `param` names it)",
  },
  INVALID_SIZE: {
    status: 400,
    type: 'BadInput',
    package: '@tiffin/diffusion',
    meaning: "`size` is not `WxH` with both sides multiples of 8 within the model's bound",
  },
  MISSING_REQUIRED_PARAMETER: {
    status: 400,
    type: 'BadInput',
    package: '@tiffin/diffusion',
    meaning: 'a field the route needs (`prompt`, `image`) is missing',
  },
  INVALID_IMAGE: {
    status: 400,
    type: 'BadInput',
    package: '@tiffin/diffusion',
    meaning: 'an upload is no PNG, JPEG or WebP image, or a field that should be a file is text',
  },
  INVALID_IMAGE_DIMENSIONS: {
    status: 400,
    type: 'BadInput',
    package: '@tiffin/diffusion',
    meaning: 'the mask is not the size of the image',
  },
  UNSUPPORTED_OPERATION: {
    status: 400,
    type: 'BadInput',
    package: '@tiffin/diffusion',
    meaning: 'the model does not serve the kind the route needs (an edit on a text2img-only model)',
  },
  INVALID_JSON: {
    status: 400,
    type: 'BadInput',
    package: '@tiffin/diffusion',
    meaning: 'the body is not a JSON object',
  },
  INVALID_CONTENT_TYPE: {
    status: 400,
    type: 'BadInput',
    package: '@tiffin/diffusion',
    meaning: 'the body is not of the content type the route reads (JSON, or multipart with the file)',
  },
  INVALID_MULTIPART: {
    status: 400,
    type: 'BadInput',
    package: '@tiffin/diffusion',
    meaning: 'the multipart body is malformed',
  },
  IMAGE_TOO_LARGE: {
    status: 400,
    type: 'BadInput',
    package: '@tiffin/diffusion',
    meaning:
      "an uploaded image has more pixels than the model accepts (a 422 on A1111's routes, `image_too_large` on OpenAI's)",
  },
  SAMPLER_NOT_SERVED: {
    status: 422,
    type: 'UnprocessableEntity',
    package: '@tiffin/diffusion',
    meaning:
      'an A1111 sampler or schedule type this service does not run (yet); the message lists the ones it runs',
  },
} as const satisfies Record<string, ErrorCodeEntry>;

/** A code of the table. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** The gRPC status a code answers with. */
export function grpcStatusOfCode(code: ErrorCode): GrpcStatusCode {
  const entry: ErrorCodeEntry = ERROR_CODES[code];
  return entry.grpc ? GrpcStatus[entry.grpc] : grpcStatusForHttp(entry.status);
}
