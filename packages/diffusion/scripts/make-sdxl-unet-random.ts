/**
 * Writes the UNet of an SDXL-base-shaped folder with random weights (5.1 GB as F16) for the SDXL step bench;
 * nothing it writes is committed.
 * Usage: tsx --conditions=source scripts/make-sdxl-unet-random.ts <dir> [f16|f32]
 */
import { writeSdxlRandomUNet } from '../src/tiny/sdxl-random.js';

const [dir, dtype = 'f16'] = process.argv.slice(2);
if (!dir || (dtype !== 'f16' && dtype !== 'f32')) {
  console.error('usage: make-sdxl-unet-random <dir> [f16|f32]');
  process.exit(2);
}
const t0 = Date.now();
writeSdxlRandomUNet(dir, dtype === 'f16' ? 'F16' : 'F32');
console.log(
  `wrote an SDXL-base-shaped random ${dtype} UNet to ${dir}/unet in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);
