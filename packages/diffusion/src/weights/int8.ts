/**
 * Symmetric per-channel int8 quantization of weights: each output channel `c` gets `scale[c] = max|w_c| / 127` and
 * `q = round(w / scale)` in [-127, 127], so `w ≈ q · scale` with an error of at most `scale[c] / 2` per value.
 */
export interface Int8Weights {
  /** The quantized values, in the layout of the input. */
  values: Int8Array;
  /** One scale per channel (1 for an all-zero channel). */
  scales: Float32Array;
}

/**
 * Quantizes `data` viewed as `[outer, channels, inner]` (channels = output channels): a MatMul weight `[K, N]` is
 * `outer = K, channels = N, inner = 1`; a Conv weight `[O, C, kh, kw]` is `outer = 1, channels = O, inner = C·kh·kw`.
 */
export function quantizeInt8(
  data: Float32Array,
  outer: number,
  channels: number,
  inner: number,
): Int8Weights {
  if (data.length !== outer * channels * inner)
    throw new RangeError(`quantizeInt8: ${data.length} values, expected ${outer}·${channels}·${inner}`);
  const max = new Float32Array(channels);
  for (let o = 0; o < outer; o++)
    for (let c = 0; c < channels; c++) {
      const base = (o * channels + c) * inner;
      let m = max[c];
      for (let i = 0; i < inner; i++) {
        const v = Math.abs(data[base + i]);
        if (v > m) m = v;
      }
      max[c] = m;
    }
  const scales = new Float32Array(channels);
  for (let c = 0; c < channels; c++) scales[c] = max[c] > 0 && Number.isFinite(max[c]) ? max[c] / 127 : 1;
  const values = new Int8Array(data.length);
  for (let o = 0; o < outer; o++)
    for (let c = 0; c < channels; c++) {
      const base = (o * channels + c) * inner;
      const inv = 1 / scales[c];
      for (let i = 0; i < inner; i++) {
        const q = Math.round(data[base + i] * inv);
        values[base + i] = Math.max(-127, Math.min(127, q));
      }
    }
  return { values, scales };
}

/** `q · scale` back to float32 (same view as {@link quantizeInt8}). */
export function dequantizeInt8(q: Int8Weights, outer: number, channels: number, inner: number): Float32Array {
  const out = new Float32Array(q.values.length);
  for (let o = 0; o < outer; o++)
    for (let c = 0; c < channels; c++) {
      const base = (o * channels + c) * inner;
      for (let i = 0; i < inner; i++) out[base + i] = q.values[base + i] * q.scales[c];
    }
  return out;
}
