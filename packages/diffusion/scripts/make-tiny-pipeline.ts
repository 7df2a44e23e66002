/** Usage: node --experimental-strip-types scripts/make-tiny-pipeline.ts <dir> [sd1|sd2|sdxl] */
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';

const [dir, flavour = 'sd1'] = process.argv.slice(2);
if (!dir || (flavour !== 'sd1' && flavour !== 'sd2' && flavour !== 'sdxl')) {
  console.error('usage: make-tiny-pipeline <dir> [sd1|sd2|sdxl]');
  process.exit(2);
}
writeTinyPipeline(dir, { flavour });
console.log(`wrote tiny ${flavour} pipeline to ${dir}`);
