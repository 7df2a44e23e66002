// @ts-check
// One generation as a task of the service: its submit request, its server-sent events, and its images
// (`/<kind>/submit?preview=true`, `/<kind>/events`, `/<kind>/get`: docs/diffusion-service.md, "Jobs").
import { api, errorText } from './api.js';

/** @typedef {{ url: string, seed: string | null, blob: Blob }} ResultImage */
/** @typedef {{ status: 'done' | 'failed' | 'cancelled', seconds?: number, error?: string }} Outcome */
/** @typedef {(name: string, data: Record<string, any>) => void} EventSink */

/** The task could not be found (it expired, or the server restarted without keeping it). */
export class TaskGone extends Error {}

/**
 * Submits a generation; answers the task's id.
 * @param {string} mode
 * @param {RequestInit} init
 * @returns {Promise<string>}
 */
export async function submitTask(mode, init) {
  const res = await api(`/${mode}/submit?preview=true`, init);
  if (res.status !== 202) throw new Error(await errorText(res));
  return String((await res.json()).id);
}

/**
 * Follows a task's server-sent events until it ends, handing each to `sink`. A task that already ended
 * (after a reload) answers its final state at once.
 * @param {string} mode
 * @param {string} id
 * @param {AbortSignal} signal
 * @param {EventSink} sink
 * @returns {Promise<Outcome>}
 */
export async function followTask(mode, id, signal, sink) {
  const res = await api(`/${mode}/events?id=${encodeURIComponent(id)}`, { signal });
  if (res.status === 404) throw new TaskGone(await errorText(res));
  if (!res.ok || !res.body) throw new Error(await errorText(res));
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { status: 'failed', error: 'the event stream ended early' };
    buffer += value;
    let cut = buffer.indexOf('\n\n');
    while (cut >= 0) {
      const event = parseEvent(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf('\n\n');
      if (!event) continue;
      const outcome = finalOutcome(event.name, event.data);
      if (outcome) {
        await reader.cancel().catch(() => {});
        return outcome;
      }
      sink(event.name, event.data);
    }
  }
}

/**
 * The outcome a final event gives (live: done/failed/cancelled; an ended task's state: succeeded/failed/cancelled).
 * @param {string} name
 * @param {Record<string, any>} data
 * @returns {Outcome | null}
 */
function finalOutcome(name, data) {
  if (name === 'done') return { status: 'done', seconds: data.seconds };
  if (name === 'succeeded') return { status: 'done' };
  if (name === 'failed' || name === 'cancelled') {
    const error = typeof data.error === 'string' ? data.error : data.error?.error;
    return { status: name, error: error ?? undefined };
  }
  return null;
}

/**
 * One server-sent event block (`event:` and `data:` lines); comments and empty blocks give null.
 * @param {string} block
 * @returns {{ name: string, data: Record<string, any> } | null}
 */
function parseEvent(block) {
  let name = 'message';
  const data = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  if (data.length === 0) return null;
  try {
    return { name, data: JSON.parse(data.join('\n')) };
  } catch {
    return null;
  }
}

/**
 * A task's state now (`queued` with its place and estimate, `running` with its step, or ended).
 * @param {string} mode
 * @param {string} id
 * @returns {Promise<Record<string, any>>}
 */
export async function taskStatus(mode, id) {
  const res = await api(`/${mode}/status?id=${encodeURIComponent(id)}`);
  if (res.status === 404) throw new TaskGone(await errorText(res));
  if (!res.ok) throw new Error(await errorText(res));
  return res.json();
}

/**
 * Asks the service to cancel a task (a queued one ends at once; a running one at its next step).
 * @param {string} mode
 * @param {string} id
 */
export async function cancelTask(mode, id) {
  const res = await api(`/${mode}/cancel?id=${encodeURIComponent(id)}`, { method: 'POST' });
  if (!res.ok && res.status !== 404) throw new Error(await errorText(res));
}

/**
 * The finished task's images: one image, or a multipart/mixed answer with a part (and an x-seed) per image.
 * @param {string} mode
 * @param {string} id
 * @returns {Promise<ResultImage[]>}
 */
export async function taskImages(mode, id) {
  const res = await api(`/${mode}/get?id=${encodeURIComponent(id)}`, {
    headers: { accept: 'image/png, */*' },
  });
  if (res.status === 404) throw new TaskGone(await errorText(res));
  if (!res.ok) throw new Error(await errorText(res));
  const type = res.headers.get('content-type') ?? '';
  if (type.startsWith('image/')) {
    const blob = await res.blob();
    return [{ url: URL.createObjectURL(blob), seed: res.headers.get('x-seed'), blob }];
  }
  const boundary = /boundary=("?)([^";]+)\1/.exec(type)?.[2];
  if (!type.startsWith('multipart/') || !boundary) throw new Error(`unexpected answer: ${type}`);
  return splitMultipart(new Uint8Array(await res.arrayBuffer()), boundary);
}

/**
 * @param {Uint8Array} bytes
 * @param {string} boundary
 * @returns {ResultImage[]}
 */
function splitMultipart(bytes, boundary) {
  const text = new TextDecoder('latin1').decode(bytes); // one char per byte: offsets match
  const marker = `--${boundary}`;
  /** @type {ResultImage[]} */
  const images = [];
  let at = text.indexOf(marker);
  while (at >= 0) {
    const headStart = at + marker.length;
    if (text.startsWith('--', headStart)) break;
    const headEnd = text.indexOf('\r\n\r\n', headStart);
    if (headEnd < 0) break;
    const next = text.indexOf(`\r\n${marker}`, headEnd);
    if (next < 0) break;
    const head = text.slice(headStart, headEnd);
    const type = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1] ?? 'application/octet-stream';
    const seed = /x-seed:\s*([^\r\n]+)/i.exec(head)?.[1] ?? null;
    const blob = new Blob([bytes.slice(headEnd + 4, next)], { type });
    images.push({ url: URL.createObjectURL(blob), seed, blob });
    at = next + 2;
  }
  return images;
}
