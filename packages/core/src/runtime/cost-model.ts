/**
 * What a batch of n rows costs, learnt from the batches run: an exponentially weighted least-squares fit of
 * `ms ≈ fixed + perRow × n`, so old measurements fade as the load (or the machine) changes.
 */
export class CostModel {
  private w = 0;
  private n = 0;
  private ms = 0;
  private nn = 0;
  private nms = 0;
  private count = 0;

  /** @param decay weight each older sample keeps per new one (0..1). */
  constructor(private readonly decay = 0.9) {}

  /** Enough batches seen to predict (the dispatcher does not shed load on a guess). */
  get ready(): boolean {
    return this.count >= 3;
  }

  observe(rows: number, ms: number): void {
    const d = this.decay;
    this.w = this.w * d + 1;
    this.n = this.n * d + rows;
    this.ms = this.ms * d + ms;
    this.nn = this.nn * d + rows * rows;
    this.nms = this.nms * d + rows * ms;
    this.count++;
  }

  /** Expected milliseconds for a batch of `rows` rows (0 before any sample). */
  estimate(rows: number): number {
    if (this.w === 0) return 0;
    const meanN = this.n / this.w;
    const meanMs = this.ms / this.w;
    const varN = this.nn / this.w - meanN * meanN;
    // All batches the same size so far: no slope to fit, so scale the mean (an over-estimate for larger batches).
    if (varN < 1e-9) return rows > meanN ? (meanMs * rows) / Math.max(meanN, 1) : meanMs;
    const perRow = Math.max(0, (this.nms / this.w - meanN * meanMs) / varN);
    const fixed = Math.max(0, meanMs - perRow * meanN);
    return fixed + perRow * rows;
  }
}
