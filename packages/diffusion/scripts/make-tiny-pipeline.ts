/** Usage: node --experimental-strip-types scripts/make-tiny-pipeline.ts <dir> [sd1|sd2|sdxl] [unet in_channels] */
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';

const [dir, flavour = 'sd1', inChannels] = process.argv.slice(2);
const unetInChannels = inChannels === undefined ? undefined : Number(inChannels);
if (
  !dir ||
  (flavour !== 'sd1' && flavour !== 'sd2' && flavour !== 'sdxl') ||
  (unetInChannels !== undefined && unetInChannels !== 4 && unetInChannels !== 9)
) {
  console.error(
    'usage: make-tiny-pipeline <dir> [sd1|sd2|sdxl] [4|9 (the UNet input channels; 9: inpainting)]',
  );
  process.exit(2);
}
writeTinyPipeline(dir, { flavour, unetInChannels });
console.log(`wrote tiny ${flavour} pipeline to ${dir}${unetInChannels === 9 ? ' (inpainting UNet)' : ''}`);
