const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The standard compact JSON writer (docs/spec/io-descriptors.md D3): no whitespace, raw UTF-8, non-finite numbers as null, BigInt as
 * a number when exact and a decimal string otherwise. Input should be plain data (run an encoder first).
 */
export function writeJson(value: unknown): string {
  // A replacer makes JSON.stringify several times slower; only BigInt needs one, and JSON.stringify
  // reports a BigInt by throwing, so try without first.
  try {
    return JSON.stringify(value) ?? 'null';
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return JSON.stringify(value, bigintReplacer) ?? 'null';
  }
}

function bigintReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') {
    return value >= -MAX_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
  }
  return value;
}
