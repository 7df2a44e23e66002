// Runs a TypeScript runner module from source (tests, a checkout): a worker cannot import .ts on its own, so
// register tsx's ESM loader inside the worker first. Built packages start their .js worker module directly.
import { workerData } from 'node:worker_threads';

const { register } = await import('tsx/esm/api');
register();
await import(workerData.entry);
