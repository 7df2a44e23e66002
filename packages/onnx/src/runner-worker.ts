// One model instance: a worker thread that opens its own ONNX Runtime session (started by RunnerPool).
import { serveRunnerInThread } from '@tiffin/core/internal';
import { type OnnxRunnerInit, openSessionRunner } from './runtime/session-runner.js';

serveRunnerInThread((init) => openSessionRunner(init as OnnxRunnerInit));
