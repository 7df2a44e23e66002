import type { Context } from '../../context/context.js';
import { decodeUtf8 } from '../../encoding/utf8.js';
import { InternalServerError } from '../../errors/index.js';
import type { HttpRequest } from '../../http/request.js';
import { buildResponse, type HttpResponse } from '../../http/response.js';
import type { ProtoField, ProtoPayload, StringValueMessage } from '../../wire/proto/messages.js';
import { type Batching, oneItemPerRequest } from '../batching.js';
import { IODescriptor, registerDescriptor } from '../descriptor.js';
import type { DescriptorSpec, SchemaObject } from '../openapi.js';
import type { SseMessage, WireTypes } from '../wire-types.js';
import { typeName } from './common.js';

export interface TextOptions<C extends string = string> {
  /** Response media type: `text/plain` (default) or `text/event-stream`; `; charset=utf-8` is added. */
  content_type?: C;
}

/** A chunk a streaming handler may yield. */
export type TextChunk = string | Uint8Array;

/** What an API function may return to a Text output. */
export type TextOutput = string | Uint8Array | Iterable<TextChunk> | AsyncIterable<TextChunk>;

/**
 * Plain text (docs/spec/io-descriptors.md §6). Input: the body as strict UTF-8 (invalid bytes → 400, D1), whatever the
 * Content-Type. Output: always streamed — a string is one chunk, an (async) iterable of strings/bytes is
 * sent chunk by chunk as it yields (server-sent events with `content_type: 'text/event-stream'` and
 * `sseEvent`).
 */
export class Text<C extends string = 'text/plain'> extends IODescriptor<string, TextOutput> {
  static override readonly descriptorId = 'tiffin.io.Text';
  /** Clients send a string; they get a string back, or an async iterable of events for `text/event-stream`. */
  declare readonly '~wire'?: WireTypes<
    string,
    C extends `text/event-stream${string}` ? AsyncIterable<SseMessage> : string
  >;
  readonly protoFields: readonly ProtoField[] = ['text'];
  readonly content_type: string;

  /** One string per request; the function gets the batch's strings and returns one output each. */
  override readonly batching: Batching<string, TextOutput, string[], TextOutput[]> =
    oneItemPerRequest('Text');

  constructor(options: TextOptions<C> = {}) {
    super();
    this.content_type = options.content_type ?? 'text/plain';
  }

  get mimeType(): string {
    return this.content_type;
  }

  /** docs/spec/io-descriptors.md §6: bytes are decoded as UTF-8, strings kept. */
  static fromSample(sample: string | Uint8Array, options: TextOptions = {}): Text {
    const descriptor = new Text(options);
    descriptor.sample = typeof sample === 'string' ? sample : decodeUtf8(sample, 'Text sample');
    return descriptor;
  }

  fromHttpRequest(request: HttpRequest): string | Promise<string> {
    const body = request.bufferedBody;
    return body === undefined
      ? request.body().then((read) => decodeUtf8(read, 'Text input'))
      : decodeUtf8(body, 'Text input');
  }

  toHttpResponse(value: TextOutput, _ctx: Context | null): HttpResponse {
    return buildResponse({ body: textChunks(value), mediaType: this.content_type });
  }

  override async fromProto(message: ProtoPayload | Uint8Array): Promise<string> {
    if (message instanceof Uint8Array) return decodeUtf8(message, 'Text input');
    return (message as StringValueMessage).value ?? '';
  }

  /** gRPC is unary: a streamed result is collected into one string. */
  override async toProto(value: TextOutput): Promise<StringValueMessage> {
    const decoder = new TextDecoder();
    let out = '';
    for await (const chunk of textChunks(value)) out += decoder.decode(chunk, { stream: true });
    return { value: out + decoder.decode() };
  }

  override openapiSchema(): SchemaObject {
    return { type: 'string' };
  }

  /** The sample (`fromSample`), else a short text: any UTF-8 text is a valid body. */
  override openapiRequestExample(): unknown {
    return this.openapiExample() ?? 'Hello, world';
  }

  /** docs/spec/io-descriptors.md §6: no args; the content type is not recorded. */
  override toSpec(): DescriptorSpec {
    return { id: Text.descriptorId };
  }

  static override fromSpec(_spec: DescriptorSpec): Text {
    return new Text();
  }
}

/**
 * The chunks of a Text result, as bytes. A value that is neither text nor an iterable fails before any
 * byte is sent (so the server can still answer 500); a bad chunk mid-stream ends the stream.
 */
function textChunks(value: TextOutput): AsyncIterable<Uint8Array> {
  if (typeof value === 'string' || value instanceof Uint8Array) {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    return (async function* single() {
      yield bytes;
    })();
  }
  const source = value as Iterable<TextChunk> | AsyncIterable<TextChunk> | null | undefined;
  const iterable =
    source &&
    (typeof (source as AsyncIterable<TextChunk>)[Symbol.asyncIterator] === 'function' ||
      typeof (source as Iterable<TextChunk>)[Symbol.iterator] === 'function');
  if (!iterable) {
    throw new InternalServerError(
      `Text output expects a string or an (async) iterable of strings/bytes, got ${typeName(value)}`,
    );
  }
  return (async function* stream() {
    for await (const chunk of source as AsyncIterable<TextChunk>) {
      if (typeof chunk === 'string') yield Buffer.from(chunk, 'utf8');
      else if (chunk instanceof Uint8Array) yield chunk;
      else {
        throw new InternalServerError(`Text output chunks must be strings or bytes, got ${typeName(chunk)}`);
      }
    }
  })();
}

registerDescriptor(Text);
