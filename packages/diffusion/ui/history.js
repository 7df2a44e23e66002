// @ts-check
// This browser's history of results, full size, in IndexedDB: every image with its seed, the request's every
// parameter and mode, and the uploaded picture and mask, so a click puts all of it back. Bounded: the newest 50
// generations and 200 MB of images; the oldest go first.
import { el } from './dom.js';

const DB_NAME = 'tiffin-ui';
const STORE = 'history';
export const HISTORY_MAX_ENTRIES = 50;
export const HISTORY_MAX_BYTES = 200 * 1024 * 1024;
/** Where earlier versions of the page kept thumbnails. */
const OLD_KEY = 'tiffin-ui-history';

/** @typedef {{ id?: number, at: string, mode: string, params: Record<string, unknown>, images: Array<{ blob: Blob, seed: string | null }>, picture: Blob | null, mask?: Blob | null, bytes: number }} HistoryEntry */

/** @type {Promise<IDBDatabase> | null} */
let opened = null;

/** @returns {Promise<IDBDatabase>} */
function db() {
  opened ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () =>
      request.result.createObjectStore(STORE, { keyPath: 'id', autoIncrement: true });
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  return opened;
}

/**
 * Runs `work` in one transaction and settles when it commits.
 * @template T
 * @param {IDBTransactionMode} mode
 * @param {(store: IDBObjectStore) => IDBRequest<T> | void} work
 * @returns {Promise<T | undefined>}
 */
async function inStore(mode, work) {
  const tx = (await db()).transaction(STORE, mode);
  const request = work(tx.objectStore(STORE));
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve(request ? request.result : undefined);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

/** Every entry, newest first. @returns {Promise<HistoryEntry[]>} */
export async function readHistory() {
  const all = /** @type {HistoryEntry[]} */ ((await inStore('readonly', (s) => s.getAll())) ?? []);
  return all.reverse();
}

/**
 * Keeps a generation; then drops the oldest past the bounds.
 * @param {Omit<HistoryEntry, 'bytes' | 'id'>} entry
 */
export async function remember(entry) {
  const inputs = (entry.picture?.size ?? 0) + (entry.mask?.size ?? 0);
  const bytes = entry.images.reduce((n, i) => n + i.blob.size, inputs);
  await inStore('readwrite', (s) => s.add({ ...entry, bytes }));
  const kept = await readHistory();
  let total = 0;
  const drop = kept.filter((e, k) => {
    total += e.bytes;
    return k >= HISTORY_MAX_ENTRIES || (k > 0 && total > HISTORY_MAX_BYTES);
  });
  if (drop.length > 0)
    await inStore('readwrite', (s) => {
      for (const e of drop) if (e.id !== undefined) s.delete(e.id);
    });
}

export async function clearHistory() {
  await inStore('readwrite', (s) => s.clear());
}

/** @type {string[]} */
let thumbUrls = [];

/**
 * Lists the history; a click on an entry hands it to `onRestore`.
 * @param {(entry: HistoryEntry) => void} onRestore
 */
export async function renderHistory(onRestore) {
  localStorage.removeItem(OLD_KEY);
  const entries = await readHistory().catch(() => /** @type {HistoryEntry[]} */ ([]));
  for (const url of thumbUrls) URL.revokeObjectURL(url);
  thumbUrls = [];
  const ol = el('history');
  ol.replaceChildren();
  for (const entry of entries) {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    const img = document.createElement('img');
    const first = entry.images[0];
    if (first) {
      img.src = URL.createObjectURL(first.blob);
      thumbUrls.push(img.src);
    }
    img.alt = '';
    const label = document.createElement('span');
    const count = entry.images.length > 1 ? `, ${entry.images.length} images` : '';
    label.textContent = `${String(entry.params.prompt ?? '').slice(0, 60)} (${entry.mode}, seed ${first?.seed ?? '?'}${count})`;
    button.append(img, label);
    button.setAttribute('aria-label', `Restore: ${label.textContent}`);
    button.addEventListener('click', () => onRestore(entry));
    li.append(button);
    ol.append(li);
  }
}
