/**
 * Writes an SD1.5-shaped pipeline with random weights (2.1 GB as F16) for end-to-end and speed
 * checks; nothing it writes is committed.
 * Usage: tsx --conditions=source scripts/make-sd15-random.ts <dir> [f16|f32]
 */
import { writeSd15RandomPipeline } from '../src/tiny/sd15-random.js';

const [dir, dtype = 'f16'] = process.argv.slice(2);
if (!dir || (dtype !== 'f16' && dtype !== 'f32')) {
  console.error('usage: make-sd15-random <dir> [f16|f32]');
  process.exit(2);
}
const t0 = Date.now();
writeSd15RandomPipeline(dir, { dtype: dtype === 'f16' ? 'F16' : 'F32' });
console.log(
  `wrote an SD1.5-shaped random ${dtype} pipeline to ${dir} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);
