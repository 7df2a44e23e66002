import { basename } from 'node:path';
import { applySignatureOverrides, InvalidArgument, type SignatureOverrides } from '@tiffin/core/internal';
import { type OnnxSignature, readOnnxSignature } from './runtime/onnx-signature.js';
import { loadOrt } from './runtime/providers.js';

/**
 * Open a model once on the CPU to read its signature (with the user's overrides), then let it go. A file
 * ONNX Runtime cannot load (corrupt, truncated, an unknown operator, not ONNX at all) is refused here, before
 * anything is written anywhere.
 */
export async function inspectOnnx(
  model: string | Uint8Array,
  overrides: SignatureOverrides | undefined,
): Promise<OnnxSignature> {
  const ort = await loadOrt();
  let session: Awaited<ReturnType<typeof ort.InferenceSession.create>>;
  try {
    session =
      typeof model === 'string'
        ? await ort.InferenceSession.create(model, { intraOpNumThreads: 1, logSeverityLevel: 4 })
        : await ort.InferenceSession.create(model, { intraOpNumThreads: 1, logSeverityLevel: 4 });
  } catch (err) {
    const what = typeof model === 'string' ? `'${basename(model)}'` : 'The given bytes';
    throw new InvalidArgument(
      `${what} is not an ONNX model ONNX Runtime can load: ${(err as Error).message.split('\n')[0]}`,
      { code: 'ONNX_MODEL_INVALID' },
    );
  }
  try {
    const read = readOnnxSignature(session);
    return { ...read, signature: applySignatureOverrides(read.signature, overrides) };
  } finally {
    await session.release();
  }
}
