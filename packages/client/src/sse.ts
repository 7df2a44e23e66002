import { TiffinClientError } from './errors.js';
import type { SseMessage } from './wire.js';

/**
 * Most characters one event may hold (its lines so far and the line being read): a server that never ends a line
 * or an event would otherwise grow the client's memory without bound. Far above any progress or token event.
 */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * Server-sent events of a response body as they arrive (the WHATWG event-stream rules: `data:` lines
 * joined with `\n`, `event:` and `id:` fields, comments and `retry:` skipped, an event ends at a blank line).
 * Breaking out of the loop cancels the body.
 */
export async function* readEvents(
  body: ReadableStream<Uint8Array>,
  maxEventChars = MAX_EVENT_CHARS,
): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  /** The line being read, and a held-back \r. */
  let buffer = '';
  let held = '';
  let data: string[] = [];
  let dataChars = 0;
  let event = '';
  let id: string | undefined;
  const take = (line: string): SseMessage | null => {
    if (line === '') {
      if (data.length === 0) {
        event = '';
        return null;
      }
      const message = { event: event || 'message', data: data.join('\n'), id };
      data = [];
      dataChars = 0;
      event = '';
      return message;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      data.push(value);
      dataChars += value.length + 1;
    } else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
    return null;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        // A \r held back at the very end was a line ending after all (no \n can follow it now).
        if (held) {
          const message = take(buffer);
          if (message) yield message;
        }
        break;
      }
      // Only the new text is split (a long line costs its length once, not once per chunk); a trailing \r may
      // be the first half of a \r\n split across chunks, so it is held back.
      let text = held + decoder.decode(value, { stream: true });
      held = text.endsWith('\r') ? '\r' : '';
      if (held) text = text.slice(0, -1);
      const parts = text.split(/\r\n|\r|\n/);
      if (parts.length === 1) buffer += parts[0];
      else {
        const lines = [buffer + parts[0], ...parts.slice(1, -1)];
        buffer = parts[parts.length - 1]!;
        for (const line of lines) {
          const message = take(line);
          if (message) yield message;
        }
      }
      if (buffer.length + dataChars > maxEventChars) {
        throw new TiffinClientError(
          `Event stream: an event longer than ${maxEventChars} characters (a line or an event never ended)`,
          'protocol',
        );
      }
    }
    // Spec: an event not closed by a blank line at the end of the stream is dropped.
  } finally {
    await reader.cancel().catch(() => {});
  }
}
