import { InvalidArgument } from '../../errors/index.js';

export interface SseEventInit {
  /** Payload; an object is written as JSON. Each line becomes its own `data:` line. */
  data: string | object;
  /** Event type (`event:` line). */
  event?: string;
  /** Event id (`id:` line). */
  id?: string | number;
  /** Reconnection time in milliseconds (`retry:` line). */
  retry?: number;
}

/**
 * Frame one server-sent event: optional `event:`, `id:`, `retry:` lines, one `data:` line per payload line,
 * then a blank line. Yield the result from a Text(`text/event-stream`) handler.
 */
export function sseEvent(init: SseEventInit): string {
  let out = '';
  if (init.event !== undefined) {
    if (/[\r\n]/.test(init.event)) throw new InvalidArgument('SSE event name must not contain a newline');
    out += `event: ${init.event}\n`;
  }
  if (init.id !== undefined) {
    const id = String(init.id);
    if (/[\r\n\0]/.test(id)) throw new InvalidArgument('SSE event id must not contain a newline or NUL');
    out += `id: ${id}\n`;
  }
  if (init.retry !== undefined) {
    if (!Number.isInteger(init.retry) || init.retry < 0) {
      throw new InvalidArgument('SSE retry must be a non-negative integer (milliseconds)');
    }
    out += `retry: ${init.retry}\n`;
  }
  const data = typeof init.data === 'string' ? init.data : JSON.stringify(init.data);
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}
