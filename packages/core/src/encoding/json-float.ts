/**
 * A JSON number literal written as a float (`2.0`, `1e3`) whose value happens to be an integer. The exact
 * parser returns these so NDArray inference can tell `[2.0]` (float64) from `[2]` (int64); JavaScript
 * numbers alone cannot (docs/spec/io-descriptors.md §1.5). Non-integral floats stay plain numbers.
 */
export class JsonFloat {
  constructor(readonly value: number) {}

  valueOf(): number {
    return this.value;
  }

  toJSON(): number {
    return this.value;
  }
}
