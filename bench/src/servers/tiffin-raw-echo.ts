/** Diagnostic child process: the Tiffin server with a descriptor doing exactly the baseline's work. */
import {
  buildResponse,
  type HttpRequest,
  type HttpResponse,
  IODescriptor,
  type ProtoField,
  Service,
  serve,
} from '@tiffin/core';

class RawJson extends IODescriptor<unknown, unknown> {
  readonly protoFields: readonly ProtoField[] = ['json'];
  get mimeType() {
    return 'application/json';
  }
  async fromHttpRequest(request: HttpRequest): Promise<unknown> {
    return JSON.parse((await request.body()).toString('utf8'));
  }
  async toHttpResponse(value: unknown): Promise<HttpResponse> {
    return buildResponse({ body: JSON.stringify(value), mediaType: 'application/json' });
  }
}

const svc = new Service('bench_raw_echo');
svc.api({ input: new RawJson(), output: new RawJson() }, function echo(input) {
  return input;
});
const handle = await serve(svc, {
  port: 0,
  logger: false,
  maxConcurrency: 1_000_000,
  handleSignals: true,
  ...(process.env.BENCH_OPTIONS ? (JSON.parse(process.env.BENCH_OPTIONS) as object) : {}),
});
process.stdout.write(`${handle.url}\n`);
