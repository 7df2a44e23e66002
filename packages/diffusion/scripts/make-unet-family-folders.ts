/** Usage: npx tsx --conditions=source scripts/make-unet-family-folders.ts <dir>: one tiny folder per UNet family. */
import { join } from 'node:path';
import { UNET_FAMILIES, type UNetFamilyName } from '../src/families/unet-families.js';
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';

const [dir] = process.argv.slice(2);
if (!dir) {
  console.error('usage: make-unet-family-folders <dir>');
  process.exit(2);
}
for (const family of Object.keys(UNET_FAMILIES) as UNetFamilyName[]) {
  writeTinyPipeline(join(dir, family), { unetFamily: family });
  console.log(`wrote ${join(dir, family)} (${UNET_FAMILIES[family].models})`);
}
