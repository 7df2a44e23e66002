import { NumpyNdarray } from '@tiffin/core';
import { BufferedHttpRequest } from '@tiffin/core/internal';

export interface ParseResult {
  /** Megabytes of request body per second. */
  tiffinMBps: number;
  baselineMBps: number;
  bodyMB: number;
}

function bestSeconds(fn: () => Promise<unknown> | unknown, repeats: number): Promise<number> {
  return (async () => {
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < repeats; i++) {
      const start = process.hrtime.bigint();
      await fn();
      best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e9);
    }
    return best;
  })();
}

/**
 * NumpyNdarray parse of a 1M-float JSON body (bytes → NDArray float64) against the bare baseline
 * `new Float64Array(JSON.parse(body.toString()))`. Best of N runs each, after a warm-up.
 */
export async function benchNdarrayParse({ count = 1_000_000, repeats = 5 } = {}): Promise<ParseResult> {
  const values = Array.from({ length: count }, (_, i) => Math.sin(i) * 1000);
  const body = Buffer.from(JSON.stringify(values), 'utf8');
  const descriptor = new NumpyNdarray({ dtype: 'float64' });
  const viaTiffin = async () => {
    const request = new BufferedHttpRequest({ headers: { 'content-type': 'application/json' }, body });
    const array = await descriptor.fromHttpRequest(request);
    if (array.shape[0] !== count) throw new Error('wrong shape');
    return array;
  };
  const baseline = () => {
    const array = new Float64Array(JSON.parse(body.toString('utf8')) as number[]);
    if (array.length !== count) throw new Error('wrong length');
    return array;
  };
  const check = await viaTiffin();
  const data = check.data as Float64Array;
  if (data[count - 1] !== values[count - 1]) throw new Error('Tiffin parse is not exact');
  await viaTiffin();
  baseline();
  const tiffinSeconds = await bestSeconds(viaTiffin, repeats);
  const baselineSeconds = await bestSeconds(baseline, repeats);
  const mb = body.byteLength / 1e6;
  return { tiffinMBps: mb / tiffinSeconds, baselineMBps: mb / baselineSeconds, bodyMB: mb };
}
