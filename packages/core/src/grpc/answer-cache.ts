import { type Metadata, Metadata as MetadataClass } from '@grpc/grpc-js';
import { CACHE_HEADER, type ResponseCacheDeps } from '../cache/api-cache.js';
import { ProtocolAnswerCache } from '../cache/protocol-cache.js';
import type { GrpcInferRequest } from '../inference-protocol/grpc-tensors.js';
import type { InferenceApi } from '../service/inference-api.js';

/** What a cached gRPC method needs of its call: the client's metadata, and the initial metadata it answers with. */
interface CachedCall {
  readonly metadata: Metadata;
  sendMetadata(metadata: Metadata): void;
}

/**
 * The response cache of a unary gRPC method (docs/cache.md, other protocols): Tiffin's `Call` and the Open
 * Inference Protocol's `ModelInfer`, per API with `cache`. The key is the method's name with what the request
 * asks (the caller's `key`: its whole message, less what only says how the call waits) and the API's `vary`
 * metadata; the answer message is kept as bytes and sent again as the same message. The client bypasses it with
 * metadata `cache-control: no-cache`; initial metadata `tiffin-cache: hit|miss` says where the answer came from.
 */
export class GrpcAnswerCache {
  private readonly caches = new Map<string, ProtocolAnswerCache>();

  constructor(
    private readonly deps: ResponseCacheDeps,
    /** The method, in the key: its answers are never another method's. */
    private readonly method: string,
  ) {}

  async answer<T>(api: InferenceApi, key: unknown, call: CachedCall, compute: () => Promise<T>): Promise<T> {
    if (!api.cache) return compute();
    let cache = this.caches.get(api.name);
    if (!cache) {
      cache = new ProtocolAnswerCache(this.deps, this.method);
      this.caches.set(api.name, cache);
    }
    const vary = api.cache.vary.map((name) => call.metadata.get(name).map(String));
    const { answer, cache: where } = await cache.answer(
      api,
      [key, vary],
      noCache(call.metadata),
      async () => ({ status: 200, headers: [], body: encodeMessage(await compute()) }),
    );
    if (where) {
      const metadata = new MetadataClass();
      metadata.set(CACHE_HEADER, where);
      call.sendMetadata(metadata);
    }
    return decodeMessage(answer.body) as T;
  }
}

/** What a v2 `ModelInfer` answer depends on: its raw or typed contents, id, tensors, outputs and parameters. */
export function inferKey(infer: GrpcInferRequest): unknown {
  const { request } = infer;
  const { priority: _p, timeout: _t, ...parameters } = request.parameters;
  return [infer.raw, request.id, parameters, request.inputs, request.outputs];
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

function encodeMessage(message: unknown): Uint8Array {
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

function decodeMessage(body: Uint8Array): unknown {
  return JSON.parse(Buffer.from(body).toString('utf8'), (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null) return value;
    const tagged = value as Record<string, unknown>;
    if (typeof tagged[BYTES] === 'string') {
      const bytes = Buffer.from(tagged[BYTES] as string, 'base64');
      return (VIEWS[String(tagged.type)] ?? VIEWS.Buffer!)(bytes);
    }
    if (typeof tagged[BIGINT] === 'string') return BigInt(tagged[BIGINT] as string);
    return value;
  });
}
