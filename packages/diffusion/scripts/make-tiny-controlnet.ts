// Writes a tiny deterministic ControlNet for the tiny SD 1.x/2.x pipeline (reference/controlnet_reference.py reads it):
//   npx tsx --conditions=source scripts/make-tiny-controlnet.ts <dir> [sd1|sd2] [seed]
import { writeTinyControlNet } from '../src/tiny/write-tiny-controlnet.js';

const [dir, flavour = 'sd1', seed = 'a'] = process.argv.slice(2);
if (!dir || (flavour !== 'sd1' && flavour !== 'sd2')) {
  console.error('usage: make-tiny-controlnet.ts <dir> [sd1|sd2] [seed]');
  process.exit(2);
}
console.log(writeTinyControlNet(dir, { flavour, seed }));
