import type { SseMessage } from './wire.js';

/**
 * Server-sent events of a response body as they arrive (the WHATWG event-stream rules: `data:` lines
 * joined with `\n`, `event:` and `id:` fields, comments and `retry:` skipped, an event ends at a blank line).
 * Breaking out of the loop cancels the body.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
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
      event = '';
      return message;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
    return null;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      // A trailing \r may be the first half of a \r\n split across chunks: hold it back.
      const held = buffer.endsWith('\r');
      const lines = (held ? buffer.slice(0, -1) : buffer).split(/\r\n|\r|\n/);
      buffer = (lines.pop() ?? '') + (held ? '\r' : '');
      for (const line of lines) {
        const message = take(line);
        if (message) yield message;
      }
    }
    // Spec: an event not closed by a blank line at the end of the stream is dropped.
  } finally {
    await reader.cancel().catch(() => {});
  }
}
