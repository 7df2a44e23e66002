// Loads the TypeScript worker entry when running from source (tests, `npx tiffin` in a checkout): Node workers cannot
// import .ts on their own, so register tsx's ESM loader inside the worker first.
import { workerData } from 'node:worker_threads';

const { register } = await import('tsx/esm/api');
register();
await import(workerData.entry);
