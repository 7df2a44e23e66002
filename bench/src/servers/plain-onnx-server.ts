/**
 * Child process: the baseline for zero-code ONNX serving, a plain node:http server around onnxruntime-node
 * answering the same JSON as `tiffin serve model.onnx` (`POST /predict`: nested lists in, nested lists out;
 * `GET /livez`) and writing the same JSON access line per request with pino (`plain-onnx-http.ts`). The model
 * runs on the main thread with one intra-op thread, as a hand-written server would run it. Args: model path.
 */
import * as ort from 'onnxruntime-node';
import { servePlainOnnx } from './plain-onnx-http.js';

const session = await ort.InferenceSession.create(process.argv[2]!, {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
});
const input = session.inputNames[0]!;
const output = session.outputNames[0]!;

servePlainOnnx(
  async (x) => {
    const y = (await session.run({ [input]: new ort.Tensor('float32', x.data, x.dims) }))[output]!;
    return { data: y.data as Float32Array<ArrayBuffer>, dims: y.dims };
  },
  async () => {},
);
