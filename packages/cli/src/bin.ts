#!/usr/bin/env node
import { registerBuild } from './commands/build.js';
import { registerContainerize } from './commands/containerize.js';
import { registerDiffusion } from './commands/diffusion.js';
import { registerInit } from './commands/init.js';
import { registerKubernetes } from './commands/kubernetes.js';
import { registerModels } from './commands/models.js';
import { registerPackageCommands } from './commands/packages.js';
import { registerServe } from './commands/serve.js';
import { reportError } from './errors.js';
import { createProgram } from './program.js';

// One line per command; each command lives in src/commands/<name>.ts.
const program = createProgram([
  registerInit,
  registerServe,
  registerBuild,
  registerPackageCommands,
  registerModels,
  registerContainerize,
  registerKubernetes,
  registerDiffusion,
]);

program.parseAsync(process.argv).catch(reportError);
