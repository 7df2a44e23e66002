import { afterAll } from 'vitest';
import { removeUserProjects } from './user-project.js';
// One test file for all, so the packages are packed and npm-installed once (user-project.ts does it once per
// process): every service file kind from every folder kind, `tiffin init`'s templates, then a model from an npm
// package served and called as users call it, and a service with queues and a cache.
import './user-projects/serve-matrix.js';
import './user-projects/init-templates.js';
import './user-projects/model-calls.js';
import './user-projects/queue-cache.js';

const started = Date.now();

afterAll(async () => {
  // What this file adds to CI (pack, install, every server and project), for the record.
  console.log(`user projects: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await removeUserProjects();
}, 120_000);
