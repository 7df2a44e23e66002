/**
 * A small Open Inference Protocol (KServe v2) client written from the public protocol text, independent
 * of the server code: JSON requests, and the binary tensor data extension (JSON header, then each
 * tensor's little-endian bytes; `Inference-Header-Content-Length` gives the JSON length).
 */

export interface BinaryInput {
  name: string;
  shape: number[];
  datatype: string;
  bytes: Uint8Array;
}

export interface InferAnswer {
  status: number;
  json: Record<string, unknown>;
  /** Binary data of each output that has `binary_data_size`, by name. */
  binary: Map<string, Uint8Array>;
  headers: Headers;
}

export async function inferJson(url: string, request: unknown): Promise<InferAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  return readAnswer(res);
}

export async function inferBinary(
  url: string,
  inputs: BinaryInput[],
  extra: Record<string, unknown> = {},
): Promise<InferAnswer> {
  const header = {
    ...extra,
    inputs: inputs.map(({ name, shape, datatype, bytes }) => ({
      name,
      shape,
      datatype,
      parameters: { binary_data_size: bytes.byteLength },
    })),
  };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const body = new Uint8Array(json.length + inputs.reduce((n, i) => n + i.bytes.byteLength, 0));
  body.set(json, 0);
  let at = json.length;
  for (const i of inputs) {
    body.set(i.bytes, at);
    at += i.bytes.byteLength;
  }
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/octet-stream',
      'inference-header-content-length': String(json.length),
    },
    body,
  });
  return readAnswer(res);
}

export async function readAnswer(res: Response): Promise<InferAnswer> {
  const bytes = new Uint8Array(await res.arrayBuffer());
  const headerLength = res.headers.get('inference-header-content-length');
  const jsonEnd = headerLength === null ? bytes.length : Number(headerLength);
  const json = JSON.parse(new TextDecoder().decode(bytes.subarray(0, jsonEnd))) as Record<string, unknown>;
  const binary = new Map<string, Uint8Array>();
  let at = jsonEnd;
  for (const out of (json.outputs as Array<Record<string, unknown>> | undefined) ?? []) {
    const size = (out.parameters as Record<string, number> | undefined)?.binary_data_size;
    if (size === undefined) continue;
    binary.set(out.name as string, bytes.slice(at, at + size));
    at += size;
  }
  return { status: res.status, json, binary, headers: res.headers };
}

/** BYTES elements in the binary form: a 4-byte little-endian length, then the UTF-8 bytes. */
export function bytesElements(items: string[]): Uint8Array {
  const encoded = items.map((s) => new TextEncoder().encode(s));
  const out = new Uint8Array(encoded.reduce((n, e) => n + 4 + e.length, 0));
  const view = new DataView(out.buffer);
  let at = 0;
  for (const e of encoded) {
    view.setUint32(at, e.length, true);
    out.set(e, at + 4);
    at += 4 + e.length;
  }
  return out;
}

export function le(values: ArrayBufferView): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}
