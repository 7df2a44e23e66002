/** Usage: tsx --conditions=source scripts/make-tiny-autoencoder.ts <dir> — the tests' tiny AutoencoderTiny folder. */
import { writeTinyAutoencoder } from '../src/tiny/write-tiny-autoencoder.js';

const [dir] = process.argv.slice(2);
if (!dir) {
  console.error('usage: make-tiny-autoencoder <dir>');
  process.exit(2);
}
writeTinyAutoencoder(dir);
console.log(`wrote the tiny autoencoder to ${dir}`);
