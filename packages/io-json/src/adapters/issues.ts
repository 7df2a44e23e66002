import type { SchemaIssue } from '@tiffin/core/descriptor';
import type { StandardIssue, StandardPathSegment } from '../standard-schema.js';

/** A path segment as JSON can carry it: numbers stay numbers (array indexes), symbols become their text. */
function segmentToJson(segment: StandardPathSegment): string | number {
  const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
  if (typeof key === 'number') return key;
  if (typeof key === 'symbol') return key.description ?? key.toString();
  return key;
}

/** Standard Schema issues → core's `SchemaIssue` (path + message), the shape of the 400 `detail`. */
export function toSchemaIssues(issues: ReadonlyArray<StandardIssue & { code?: unknown }>): SchemaIssue[] {
  return issues.map((issue) => {
    const converted: SchemaIssue = { path: (issue.path ?? []).map(segmentToJson), message: issue.message };
    if (typeof issue.code === 'string') converted.code = issue.code;
    return converted;
  });
}
