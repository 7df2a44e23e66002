/**
 * Writes an SD1.5-shaped pipeline with random weights (2.1 GB as F16) for end-to-end and speed
 * checks; nothing it writes is committed. `--unet-family=bk-sdm-tiny` (an SD 1.x row of src/families/unet-families.ts)
 * writes that family's UNet in place of SD1.5's.
 * Usage: tsx --conditions=source scripts/make-sd15-random.ts <dir> [f16|f32] [--unet-family=<name>]
 */
import { UNET_FAMILIES, type UNetFamilyName } from '../src/families/unet-families.js';
import { writeSd15RandomPipeline } from '../src/tiny/sd15-random.js';

const args = process.argv.slice(2);
const [dir, dtype = 'f16'] = args.filter((a) => !a.startsWith('--'));
const unetFamily = args.find((a) => a.startsWith('--unet-family='))?.split('=')[1] as
  | UNetFamilyName
  | undefined;
if (!dir || (dtype !== 'f16' && dtype !== 'f32') || (unetFamily && !(unetFamily in UNET_FAMILIES))) {
  console.error('usage: make-sd15-random <dir> [f16|f32] [--unet-family=<name>]');
  process.exit(2);
}
const t0 = Date.now();
writeSd15RandomPipeline(dir, { dtype: dtype === 'f16' ? 'F16' : 'F32', unetFamily });
console.log(
  `wrote an SD1.5-shaped random ${dtype} pipeline to ${dir} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);
