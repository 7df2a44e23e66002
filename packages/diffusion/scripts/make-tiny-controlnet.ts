// Writes a tiny deterministic ControlNet for a tiny pipeline (reference/controlnet_reference.py and
// reference/sdxl_controlnet_reference.py read it):
//   npx tsx --conditions=source scripts/make-tiny-controlnet.ts <dir> [sd1|sd2|sdxl] [seed]
import { writeTinyControlNet } from '../src/tiny/write-tiny-controlnet.js';

const [dir, flavour = 'sd1', seed = 'a'] = process.argv.slice(2);
if (!dir || (flavour !== 'sd1' && flavour !== 'sd2' && flavour !== 'sdxl')) {
  console.error('usage: make-tiny-controlnet.ts <dir> [sd1|sd2|sdxl] [seed]');
  process.exit(2);
}
console.log(writeTinyControlNet(dir, { flavour, seed }));
