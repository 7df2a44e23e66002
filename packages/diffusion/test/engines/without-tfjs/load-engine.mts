// Child process of onnx-without-tfjs.test.ts: builds and opens the ONNX engine for the folder in argv[2], runs
// its graphs once, and prints what it saw (TF.js imports throw in this process).
import { loadOnnxComponents } from '../../../src/engines/onnx/load.js';

const dir = process.argv[2] as string;
const c = await loadOnnxComponents(dir, { cacheDir: `${dir}/.graphs`, log: () => {} });
let tfjsError = '';
try {
  await import('@tensorflow/tfjs');
} catch (e) {
  tfjsError = (e as Error).message;
}
console.log(
  JSON.stringify({
    loraWeights: [...c.loraTarget.baseWeightNames()].length,
    unetChannels: c.unet.config.block_out_channels,
    tfjsError,
  }),
);
c.textEncoder.dispose();
c.unet.dispose();
c.vae.dispose();
