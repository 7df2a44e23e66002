import type { ExampleFile } from '../../io/example-file.js';
import { exampleFilePath } from '../../io/example-file.js';
import type { Service } from '../../service/service.js';
import type { Exchange } from '../exchange.js';
import type { RouteTable } from './route-table.js';

/** Serve every API's example files (see ExampleFile) at `/docs/examples/<api>[/<part>]`, made once each. */
export function addExampleFileRoutes(routes: RouteTable, service: Service): void {
  for (const api of service.apis.values()) {
    let files: Readonly<Record<string, ExampleFile>>;
    try {
      files = api.input.exampleFiles(api.example);
    } catch {
      continue; // the document leaves them out too
    }
    for (const [part, file] of Object.entries(files)) {
      let bytes: Promise<Uint8Array> | undefined;
      routes.add(`/${exampleFilePath(api.name, part)}`, {
        GET: async (ctx: Exchange) => {
          bytes ??= file.bytes();
          const body = await bytes;
          ctx.status = 200;
          ctx.set('content-type', file.mediaType);
          ctx.set('content-disposition', `inline; filename="${file.fileName.replace(/["\\\r\n]/g, '_')}"`);
          ctx.set('cache-control', 'public, max-age=3600');
          ctx.responseBody = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
        },
      });
    }
  }
}
