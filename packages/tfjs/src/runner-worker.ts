// One model instance: a worker thread with its own TensorFlow.js backend and model (started by RunnerPool).
import { serveRunnerInThread } from '@tiffin/core/internal';
import { openRunner, type TfjsRunnerInit } from './runner.js';

serveRunnerInThread((init) => openRunner(init as TfjsRunnerInit));
