/**
 * Encoders that turn values JSON cannot carry natively (NDArray, Map, Set, Date, BigInt, typed arrays,
 * DataFrame, ...) into plain JSON data. Packages register encoders for their own types here, so core
 * never imports them (io-pandas registers DataFrame/Series on import).
 */
export interface JsonEncoderRule {
  /** For messages and debugging. */
  readonly name: string;
  test(value: unknown): boolean;
  /** Return plain data; nested values are encoded again by the caller. */
  encode(value: unknown): unknown;
}

const rules: JsonEncoderRule[] = [];

/** Register an encoder rule; the most recently registered rule is tried first. */
export function registerJsonEncoder(rule: JsonEncoderRule): void {
  const i = rules.findIndex((r) => r.name === rule.name);
  if (i >= 0) rules.splice(i, 1);
  rules.unshift(rule);
}

export function jsonEncoderRules(): readonly JsonEncoderRule[] {
  return rules;
}
