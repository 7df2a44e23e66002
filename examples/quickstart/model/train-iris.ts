/**
 * Trains the quickstart's iris classifier and writes it as ONNX with Tiffin's own ONNX writer.
 *
 *   npx tsx --conditions=source examples/quickstart/model/train-iris.ts      # rewrites iris.onnx and iris.json beside this file
 *
 * A multilayer perceptron (4 → 8 ReLU → 3 softmax), fitted by full-batch Adam on 120 of the 150 rows of
 * iris.csv; the other 30 (every fifth row of each species) are held out and scored. Input standardisation
 * (the training rows' mean and standard deviation) is part of the graph, so the model takes raw
 * measurements in cm. Deterministic: a fixed seed, so a rerun writes the same bytes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DataType, encodeModel, type InitializerDef } from '@tiffin/onnx';

const HERE = dirname(fileURLToPath(import.meta.url));
const FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'] as const;
const SPECIES = ['setosa', 'versicolor', 'virginica'] as const;
const HIDDEN = 8;
const EPOCHS = 600;
const LEARNING_RATE = 0.02;
const SEED = 28;

interface Row {
  x: number[];
  y: number;
}

function readIris(): Row[] {
  const [header, ...lines] = readFileSync(join(HERE, 'iris.csv'), 'utf8').trim().split('\n');
  if (header !== `${FEATURES.join(',')},species`) throw new Error(`iris.csv: unexpected header ${header}`);
  return lines.map((line) => {
    const cells = line.split(',');
    const y = SPECIES.indexOf(cells[4] as (typeof SPECIES)[number]);
    if (y < 0) throw new Error(`iris.csv: unknown species in ${line}`);
    return { x: cells.slice(0, 4).map(Number), y };
  });
}

/** mulberry32: a small seeded generator, so the weights do not depend on Math.random. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Row-major matrix of `rows × cols`. */
class Matrix {
  readonly data: Float64Array;
  constructor(
    readonly rows: number,
    readonly cols: number,
  ) {
    this.data = new Float64Array(rows * cols);
  }
}

interface Params {
  w1: Matrix; // [4, HIDDEN]
  b1: Float64Array;
  w2: Matrix; // [HIDDEN, 3]
  b2: Float64Array;
}

function initParams(random: () => number): Params {
  const gaussian = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const w1 = new Matrix(4, HIDDEN);
  const w2 = new Matrix(HIDDEN, SPECIES.length);
  for (let i = 0; i < w1.data.length; i++) w1.data[i] = gaussian() * Math.sqrt(2 / 4);
  for (let i = 0; i < w2.data.length; i++) w2.data[i] = gaussian() * Math.sqrt(2 / HIDDEN);
  return { w1, b1: new Float64Array(HIDDEN), w2, b2: new Float64Array(SPECIES.length) };
}

/** Hidden activations and class probabilities of one standardised row. */
function forward(p: Params, x: readonly number[]): { h: Float64Array; probs: Float64Array } {
  const h = new Float64Array(HIDDEN);
  for (let j = 0; j < HIDDEN; j++) {
    let s = p.b1[j]!;
    for (let i = 0; i < 4; i++) s += x[i]! * p.w1.data[i * HIDDEN + j]!;
    h[j] = Math.max(0, s);
  }
  const logits = new Float64Array(SPECIES.length);
  for (let k = 0; k < SPECIES.length; k++) {
    let s = p.b2[k]!;
    for (let j = 0; j < HIDDEN; j++) s += h[j]! * p.w2.data[j * SPECIES.length + k]!;
    logits[k] = s;
  }
  const max = Math.max(...logits);
  const exp = logits.map((l) => Math.exp(l - max));
  const sum = exp.reduce((a, b) => a + b, 0);
  return { h, probs: exp.map((e) => e / sum) };
}

/** Full-batch Adam on the mean cross-entropy. */
function train(rows: Row[], random: () => number): Params {
  const p = initParams(random);
  const tensors = [p.w1.data, p.b1, p.w2.data, p.b2];
  const m = tensors.map((t) => new Float64Array(t.length));
  const v = tensors.map((t) => new Float64Array(t.length));
  const [beta1, beta2, eps] = [0.9, 0.999, 1e-8];
  for (let epoch = 1; epoch <= EPOCHS; epoch++) {
    const grads = tensors.map((t) => new Float64Array(t.length));
    const [gw1, gb1, gw2, gb2] = grads as [Float64Array, Float64Array, Float64Array, Float64Array];
    for (const { x, y } of rows) {
      const { h, probs } = forward(p, x);
      const dLogits = probs.map((q, k) => (q - (k === y ? 1 : 0)) / rows.length);
      const dh = new Float64Array(HIDDEN);
      for (let j = 0; j < HIDDEN; j++) {
        for (let k = 0; k < SPECIES.length; k++) {
          gw2[j * SPECIES.length + k]! += h[j]! * dLogits[k]!;
          dh[j]! += p.w2.data[j * SPECIES.length + k]! * dLogits[k]!;
        }
        if (h[j]! <= 0) dh[j] = 0;
      }
      for (let k = 0; k < SPECIES.length; k++) gb2[k]! += dLogits[k]!;
      for (let i = 0; i < 4; i++) for (let j = 0; j < HIDDEN; j++) gw1[i * HIDDEN + j]! += x[i]! * dh[j]!;
      for (let j = 0; j < HIDDEN; j++) gb1[j]! += dh[j]!;
    }
    tensors.forEach((t, n) => {
      for (let i = 0; i < t.length; i++) {
        const g = grads[n]![i]!;
        m[n]![i] = beta1 * m[n]![i]! + (1 - beta1) * g;
        v[n]![i] = beta2 * v[n]![i]! + (1 - beta2) * g * g;
        const mHat = m[n]![i]! / (1 - beta1 ** epoch);
        const vHat = v[n]![i]! / (1 - beta2 ** epoch);
        t[i]! -= (LEARNING_RATE * mHat) / (Math.sqrt(vHat) + eps);
      }
    });
  }
  return p;
}

const argmax = (a: ArrayLike<number>): number => {
  let best = 0;
  for (let i = 1; i < a.length; i++) if (a[i]! > a[best]!) best = i;
  return best;
};

const float32 = (name: string, dims: number[], values: ArrayLike<number>): InitializerDef => ({
  name,
  dataType: DataType.FLOAT,
  dims,
  data: { kind: 'raw', bytes: new Uint8Array(Float32Array.from(values).buffer) },
});

function onnxModel(p: Params, mean: number[], std: number[]): Uint8Array {
  return encodeModel({
    opsets: { '': 17 },
    graph: {
      name: 'iris_mlp',
      inputs: [{ name: 'measurements', elemType: DataType.FLOAT, shape: ['batch', 4] }],
      outputs: [{ name: 'probabilities', elemType: DataType.FLOAT, shape: ['batch', SPECIES.length] }],
      initializers: [
        float32('mean', [4], mean),
        float32('std', [4], std),
        float32('w1', [4, HIDDEN], p.w1.data),
        float32('b1', [HIDDEN], p.b1),
        float32('w2', [HIDDEN, SPECIES.length], p.w2.data),
        float32('b2', [SPECIES.length], p.b2),
      ],
      nodes: [
        { opType: 'Sub', inputs: ['measurements', 'mean'], outputs: ['centred'] },
        { opType: 'Div', inputs: ['centred', 'std'], outputs: ['standardised'] },
        { opType: 'Gemm', inputs: ['standardised', 'w1', 'b1'], outputs: ['hidden_linear'] },
        { opType: 'Relu', inputs: ['hidden_linear'], outputs: ['hidden'] },
        { opType: 'Gemm', inputs: ['hidden', 'w2', 'b2'], outputs: ['logits'] },
        {
          opType: 'Softmax',
          inputs: ['logits'],
          outputs: ['probabilities'],
          attributes: { axis: { kind: 'int', value: -1 } },
        },
      ],
    },
  });
}

const rows = readIris();
// Every fifth row of each species (10 per species) is held out; the classes are 50 consecutive rows each.
const test = rows.filter((_, i) => i % 5 === 4);
const trainRows = rows.filter((_, i) => i % 5 !== 4);
const mean = FEATURES.map((_, i) => trainRows.reduce((s, r) => s + r.x[i]!, 0) / trainRows.length);
const std = FEATURES.map((_, i) =>
  Math.sqrt(trainRows.reduce((s, r) => s + (r.x[i]! - mean[i]!) ** 2, 0) / trainRows.length),
);
const standardise = (r: Row): Row => ({ x: r.x.map((v, i) => (v - mean[i]!) / std[i]!), y: r.y });
const params = train(trainRows.map(standardise), seeded(SEED));
const accuracy = (set: Row[]) =>
  set.filter((r) => argmax(forward(params, standardise(r).x).probs) === r.y).length / set.length;

const bytes = onnxModel(params, mean, std);
writeFileSync(join(HERE, 'iris.onnx'), bytes);
const card = {
  name: 'iris',
  task: 'classification',
  input: { name: 'measurements', features: FEATURES, unit: 'cm' },
  output: { name: 'probabilities' },
  labels: SPECIES,
  architecture: `MLP 4 → ${HIDDEN} ReLU → ${SPECIES.length} softmax, standardisation inside the graph`,
  training: {
    rows: trainRows.length,
    epochs: EPOCHS,
    optimiser: 'Adam',
    learningRate: LEARNING_RATE,
    seed: SEED,
  },
  accuracy: { train: accuracy(trainRows), heldOut: accuracy(test), heldOutRows: test.length },
  data: 'iris.csv (see README.md in this folder)',
};
writeFileSync(join(HERE, 'iris.json'), `${JSON.stringify(card, null, 2)}\n`);
console.log(
  `iris.onnx: ${bytes.length} bytes; accuracy train ${card.accuracy.train.toFixed(4)} (${trainRows.length} rows), ` +
    `held out ${card.accuracy.heldOut.toFixed(4)} (${test.length} rows)`,
);
