/**
 * Multinomial logistic regression (softmax) trained by full-batch gradient descent on standardized features.
 * Deterministic: zero-initialised weights, fixed learning rate and epoch count.
 */
export class SoftmaxClassifier {
  private readonly mean: Float64Array;
  private readonly std: Float64Array;
  /** weights[c * (d + 1) + j], the last column per class is the bias. */
  private readonly weights: Float64Array;

  private constructor(
    readonly features: number,
    readonly classes: number,
    mean: Float64Array,
    std: Float64Array,
    weights: Float64Array,
  ) {
    this.mean = mean;
    this.std = std;
    this.weights = weights;
  }

  static train(
    rows: ReadonlyArray<ArrayLike<number>>,
    labels: readonly number[],
    classes: number,
    { epochs = 500, learningRate = 0.5, l2 = 1e-3 } = {},
  ): SoftmaxClassifier {
    const d = rows[0]!.length;
    const n = rows.length;
    const mean = new Float64Array(d);
    const std = new Float64Array(d);
    for (const r of rows) for (let j = 0; j < d; j++) mean[j]! += r[j]! / n;
    for (const r of rows) for (let j = 0; j < d; j++) std[j]! += (r[j]! - mean[j]!) ** 2 / n;
    for (let j = 0; j < d; j++) std[j] = Math.sqrt(std[j]!) || 1;
    const model = new SoftmaxClassifier(d, classes, mean, std, new Float64Array(classes * (d + 1)));
    const x = rows.map((r) => model.standardize(r));
    const grad = new Float64Array(model.weights.length);
    for (let epoch = 0; epoch < epochs; epoch++) {
      grad.fill(0);
      for (let i = 0; i < n; i++) {
        const p = model.probabilitiesOfStandardized(x[i]!);
        for (let c = 0; c < classes; c++) {
          const err = p[c]! - (labels[i] === c ? 1 : 0);
          const base = c * (d + 1);
          for (let j = 0; j < d; j++) grad[base + j]! += (err * x[i]![j]!) / n;
          grad[base + d]! += err / n;
        }
      }
      for (let k = 0; k < grad.length; k++) {
        const isBias = k % (d + 1) === d;
        model.weights[k]! -= learningRate * (grad[k]! + (isBias ? 0 : l2 * model.weights[k]!));
      }
    }
    return model;
  }

  private standardize(row: ArrayLike<number>): Float64Array {
    const out = new Float64Array(this.features);
    for (let j = 0; j < this.features; j++) out[j] = (row[j]! - this.mean[j]!) / this.std[j]!;
    return out;
  }

  private probabilitiesOfStandardized(x: Float64Array): Float64Array {
    const d = this.features;
    const logits = new Float64Array(this.classes);
    for (let c = 0; c < this.classes; c++) {
      let z = this.weights[c * (d + 1) + d]!;
      for (let j = 0; j < d; j++) z += this.weights[c * (d + 1) + j]! * x[j]!;
      logits[c] = z;
    }
    const max = Math.max(...logits);
    let sum = 0;
    for (let c = 0; c < this.classes; c++) {
      logits[c] = Math.exp(logits[c]! - max);
      sum += logits[c]!;
    }
    for (let c = 0; c < this.classes; c++) logits[c]! /= sum;
    return logits;
  }

  /** Class probabilities of one row of raw features. */
  probabilities(row: ArrayLike<number>): number[] {
    return [...this.probabilitiesOfStandardized(this.standardize(row))];
  }

  /** Most likely class of one row. */
  predict(row: ArrayLike<number>): number {
    const p = this.probabilities(row);
    return p.indexOf(Math.max(...p));
  }
}
