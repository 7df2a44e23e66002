import type { Context } from '../context/context.js';
import { BadInput } from '../errors/index.js';
import { BufferedHttpRequest } from '../http/request.js';
import { type HttpResponse, readResponseBody } from '../http/response.js';
import { NDArray } from '../ndarray/ndarray.js';
import type { Tensor, TensorMetadata } from '../wire/v2/tensor.js';
import type { WireForm } from './wire-form.js';

/**
 * The default Open Inference Protocol (v2) form of a descriptor whose HTTP body is text (JSON, text/*): one
 * BYTES element holding that body. The descriptor's own HTTP codec reads and writes it, so a descriptor
 * without a tensor form of its own is served over v2 as it is over HTTP. Bodies that are not text have no
 * default tensor form: a BYTES element is a UTF-8 string here.
 */
export function bodyTensorForm(wire: WireForm): boolean {
  return wire.form === 'json' || wire.form === 'text';
}

export function bodyTensorMetadata(name: string): TensorMetadata[] {
  return [{ name, datatype: 'BYTES', shape: [1] }];
}

/** The one BYTES element of a body tensor (anything else is the client's mistake: 400). */
export function bodyTensorText(tensors: readonly Tensor[], descriptor: string): string {
  const array = tensors.length === 1 ? tensors[0]!.array : null;
  if (array?.dtype !== 'str' || array.size !== 1) {
    throw new BadInput(`${descriptor} takes one input tensor of one BYTES element (text or JSON)`);
  }
  return (array.data as string[])[0]!;
}

/** A request for the input descriptor to read, as if the body had come over HTTP with `mediaType`. */
export function bodyRequest(ctx: Context, body: string, mediaType: string): BufferedHttpRequest {
  return new BufferedHttpRequest({
    method: 'POST',
    url: ctx.request.url,
    headers: { 'content-type': mediaType },
    body: Buffer.from(body, 'utf8'),
    limits: ctx.request.limits,
  });
}

/** The text of a descriptor's HTTP answer, as one BYTES element. */
export async function bodyTensor(name: string, response: HttpResponse): Promise<Tensor> {
  const text = (await readResponseBody(response)).toString('utf8');
  return { name, array: new NDArray([text], [1], 'str') };
}

/** The media type a body tensor is read as: the descriptor's own, JSON or plain text when it has none. */
export function bodyMediaType(wire: WireForm, mimeType: string | null): string {
  return mimeType ?? (wire.form === 'json' ? 'application/json' : 'text/plain; charset=utf-8');
}
