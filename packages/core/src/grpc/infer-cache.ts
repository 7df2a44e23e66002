import { type Metadata, Metadata as MetadataClass } from '@grpc/grpc-js';
import { CACHE_HEADER, type ResponseCacheDeps } from '../cache/api-cache.js';
import { ProtocolAnswerCache } from '../cache/protocol-cache.js';
import type { ModelInferResponseMessage } from '../inference-protocol/grpc-messages.js';
import type { GrpcInferRequest } from '../inference-protocol/grpc-tensors.js';
import type { InferenceApi } from '../service/inference-api.js';

/** What `ModelInfer` needs of its call: the client's metadata, and the initial metadata it answers with. */
interface InferCall {
  readonly metadata: Metadata;
  sendMetadata(metadata: Metadata): void;
}

/**
 * The response cache of the Open Inference Protocol's gRPC `ModelInfer` (docs/cache.md, other protocols): per
 * API with `cache`, keyed by the whole request (its id, tensors, requested outputs, parameters less `priority` and
 * `timeout`, raw or typed contents); the answer message is kept as bytes and sent again as the same message. The
 * client bypasses it with metadata `cache-control: no-cache`; initial metadata `tiffin-cache: hit|miss` says where
 * the answer came from.
 */
export class GrpcInferCache {
  private readonly caches = new Map<string, ProtocolAnswerCache>();

  constructor(private readonly deps: ResponseCacheDeps) {}

  async answer(
    api: InferenceApi,
    infer: GrpcInferRequest,
    call: InferCall,
    compute: () => Promise<ModelInferResponseMessage>,
  ): Promise<ModelInferResponseMessage> {
    if (!api.cache) return compute();
    let cache = this.caches.get(api.name);
    if (!cache) {
      cache = new ProtocolAnswerCache(this.deps, 'v2-grpc');
      this.caches.set(api.name, cache);
    }
    const { request } = infer;
    const { priority: _p, timeout: _t, ...parameters } = request.parameters;
    const key = [infer.raw, request.id, parameters, request.inputs, request.outputs];
    const { answer, cache: where } = await cache.answer(api, key, noCache(call.metadata), async () => ({
      status: 200,
      headers: [],
      body: encodeMessage(await compute()),
    }));
    if (where) {
      const metadata = new MetadataClass();
      metadata.set(CACHE_HEADER, where);
      call.sendMetadata(metadata);
    }
    return decodeMessage(answer.body);
  }
}

/** Metadata `cache-control: no-cache` (or `no-store`), or `pragma: no-cache`: a fresh answer. */
function noCache(metadata: Metadata): boolean {
  const value = (name: string) => metadata.get(name).map(String).join(', ');
  return (
    /(^|[\s,])no-(cache|store)($|[\s,=])/i.test(value('cache-control')) || /no-cache/i.test(value('pragma'))
  );
}

/** Bytes, typed arrays and bigints as JSON can carry them, and back. */
const BYTES = '$bytes';
const BIGINT = '$bigint';

function encodeMessage(message: ModelInferResponseMessage): Uint8Array {
  return Buffer.from(
    JSON.stringify(message, function (this: Record<string, unknown>, key, value: unknown) {
      const raw = this[key];
      if (ArrayBuffer.isView(raw)) {
        const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
        return { [BYTES]: bytes.toString('base64'), type: raw.constructor.name };
      }
      return typeof value === 'bigint' ? { [BIGINT]: value.toString() } : value;
    }),
  );
}

const VIEWS: Record<string, (bytes: Buffer) => ArrayBufferView> = {
  Buffer: (b) => b,
  Uint8Array: (b) => new Uint8Array(b),
  Int8Array: (b) => new Int8Array(aligned(b)),
  Int16Array: (b) => new Int16Array(aligned(b)),
  Uint16Array: (b) => new Uint16Array(aligned(b)),
  Int32Array: (b) => new Int32Array(aligned(b)),
  Uint32Array: (b) => new Uint32Array(aligned(b)),
  Float32Array: (b) => new Float32Array(aligned(b)),
  Float64Array: (b) => new Float64Array(aligned(b)),
  BigInt64Array: (b) => new BigInt64Array(aligned(b)),
  BigUint64Array: (b) => new BigUint64Array(aligned(b)),
};

/** A fresh ArrayBuffer of the bytes (a typed array needs its own alignment). */
function aligned(bytes: Buffer): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

function decodeMessage(body: Uint8Array): ModelInferResponseMessage {
  return JSON.parse(Buffer.from(body).toString('utf8'), (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null) return value;
    const tagged = value as Record<string, unknown>;
    if (typeof tagged[BYTES] === 'string') {
      const bytes = Buffer.from(tagged[BYTES] as string, 'base64');
      return (VIEWS[String(tagged.type)] ?? VIEWS.Buffer!)(bytes);
    }
    if (typeof tagged[BIGINT] === 'string') return BigInt(tagged[BIGINT] as string);
    return value;
  }) as ModelInferResponseMessage;
}
