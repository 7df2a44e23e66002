import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type LoadedModel, NDArray, topK } from '@tiffin/core';
import { loadModel } from '@tiffin/onnx';

/** The trained model this service serves (see model/README.md: how it was trained, on what, how well). */
export const IRIS_MODEL = fileURLToPath(new URL('../model/iris.onnx', import.meta.url));

interface ModelCard {
  labels: string[];
  input: { name: string; features: string[] };
  output: { name: string };
}

/** The model card the training script wrote next to the model: labels and tensor names. */
export const IRIS_CARD = JSON.parse(
  readFileSync(new URL('../model/iris.json', import.meta.url), 'utf8'),
) as ModelCard;

/** Runner threads: a 722-byte model needs few; batches go to every idle one (`max_concurrent_batches`). */
export const IRIS_INSTANCES = 2;

/** The species names, in the order of the model's `probabilities` output. */
export const SPECIES: readonly string[] = IRIS_CARD.labels;
export const FEATURES: readonly string[] = IRIS_CARD.input.features;

/** The ONNX iris classifier: rows of 4 measurements (cm) in, class probabilities out, run off the event loop. */
export class IrisClassifier {
  private constructor(private readonly model: LoadedModel) {}

  /** Loads the ONNX file into its worker-thread runner instances (@tiffin/onnx). */
  static async load(path = IRIS_MODEL): Promise<IrisClassifier> {
    return new IrisClassifier(await loadModel(path, { instances: IRIS_INSTANCES }));
  }

  /** `[n, 4]` float32 measurements → `[n, 3]` probabilities. */
  async probabilities(rows: NDArray): Promise<NDArray> {
    const out = await this.model.run({ [IRIS_CARD.input.name]: rows });
    return out[IRIS_CARD.output.name]!;
  }

  /** The index of the most likely species of each row. */
  async predict(rows: NDArray): Promise<number[]> {
    return topK(await this.probabilities(rows), SPECIES, { k: 1 }).map(([best]) => best!.index);
  }

  /** Rows of plain numbers (JSON, CSV) as the model's float32 input. */
  static rows(rows: readonly (readonly number[])[]): NDArray {
    return new NDArray(Float32Array.from(rows.flat()), [rows.length, 4], 'float32');
  }

  close(): Promise<void> {
    return this.model.close();
  }
}
