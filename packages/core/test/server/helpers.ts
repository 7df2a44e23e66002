import { connect } from 'node:net';
import type { RequestBodyObject } from '../../src/descriptor.js';
import {
  BadInput,
  buildResponse,
  type HttpRequest,
  type HttpResponse,
  IODescriptor,
  MemoryLogger,
  type ProtoField,
  type SchemaObject,
  type ServeOptions,
  type ServerHandle,
  type Service,
  serve,
} from '../../src/index.js';
import type { ResponseObject } from '../../src/io/openapi.js';

/**
 * A minimal test-local descriptor: UTF-8 text in, text (or a stream of text chunks) out, honouring the ctx's
 * status/headers/cookies. It lets the server be tested independently of the built-in descriptors.
 */
export class PlainText extends IODescriptor<string, string | AsyncIterable<string>> {
  readonly protoFields: readonly ProtoField[] = ['text'];

  get mimeType(): string {
    return 'text/plain';
  }

  async fromHttpRequest(request: HttpRequest): Promise<string> {
    const body = await request.body();
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(body);
    } catch {
      throw new BadInput('Request body is not valid UTF-8');
    }
  }

  /** The handler's ctx.response is applied by the server, not here. */
  async toHttpResponse(value: string | AsyncIterable<string>): Promise<HttpResponse> {
    return buildResponse({ body: value, mediaType: 'text/plain' });
  }

  override openapiSchema(): SchemaObject {
    return { type: 'string' };
  }
  override openapiComponents(): null {
    return null;
  }
  override openapiExample(): unknown {
    return 'hello';
  }
  override openapiRequestBody(): RequestBodyObject {
    return this.buildRequestBody();
  }
  override openapiResponses(): ResponseObject {
    return this.buildResponses();
  }
  override toSpec() {
    return { id: 'test.PlainText', args: {} };
  }
}

/** Start `svc` on 127.0.0.1 port 0 with logs kept in memory. */
export async function start(
  svc: Service,
  options: ServeOptions = {},
): Promise<ServerHandle & { logs: MemoryLogger }> {
  const logs = new MemoryLogger();
  const handle = await serve(svc, {
    port: 0,
    host: '127.0.0.1',
    handleSignals: false,
    logger: logs,
    ...options,
  });
  return Object.assign(handle, { logs });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** GET `path` over a raw connection with the given Host header (fetch cannot set it); resolves with the whole reply. */
export function rawGet(port: number, path: string, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    socket.end(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}
