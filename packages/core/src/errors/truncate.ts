/** Longest user value an error message quotes, in characters. */
export const MESSAGE_VALUE_LENGTH = 100;

/**
 * A client-supplied value as an error message may quote it: at most `max` characters, with the number of
 * characters left out. Messages go back to the client and into logs; a 5,000-character value (or a
 * megabyte) echoed back helps no one.
 */
export function truncateForMessage(value: string, max: number = MESSAGE_VALUE_LENGTH): string {
  if (value.length <= max) return value;
  return `${value.slice(0, max)}… (${value.length - max} more characters)`;
}
