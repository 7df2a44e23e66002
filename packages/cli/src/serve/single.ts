import { type ServeOptions, serve } from '@tiffin/core';
import { loadService, type ServiceTarget } from '../service-loader.js';

/** Load the service and serve it in this process until SIGTERM/SIGINT (then drain and exit 0). */
export async function serveInProcess(target: ServiceTarget, options: ServeOptions): Promise<void> {
  const service = await loadService(target);
  await serve(service, { ...options, handleSignals: true });
}
