import { BadInput } from '../errors/index.js';

/**
 * True when `value` nests arrays/objects deeper than `maxDepth` (a scalar is depth 0, `[]` depth 1). An
 * explicit stack, not recursion: the point is to look at values too deep for a recursive walk.
 */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (depth > maxDepth) return true;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (child !== null && typeof child === 'object') {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/**
 * Parsed JSON text deeper than `maxDepth` → BadInput. JSON.parse itself copes with any depth, but every later
 * walk (validation, conversion, encoding) is recursive. A document of n characters nests at most n/2 levels,
 * so short bodies skip the walk.
 */
export function checkJsonDepth(value: unknown, textLength: number, maxDepth: number, what: string): void {
  if (textLength <= 2 * maxDepth) return;
  if (nestsDeeperThan(value, maxDepth)) {
    throw new BadInput(`${what} nests arrays/objects deeper than ${maxDepth} levels`);
  }
}
