// @ts-check
// A generation's result: its images side by side (each with its seed, "Use this seed" and a PNG download), its
// parameters listed once below them, and the panel brought into view.
import { el, input, reveal } from './dom.js';

/** @typedef {import('./task.js').ResultImage} ResultImage */

/** Fields the page sets for itself, not worth showing. */
const UNSHOWN = new Set(['output_format', 'lora_weights']);

/** @type {string | null} */
let lastSeed = null;
/** @type {string[]} The object URLs of the result shown, let go when the next replaces it. */
let shownUrls = [];

/**
 * @param {ResultImage[]} images
 * @param {Record<string, unknown>} params
 * @param {string} mode
 * @param {number | undefined} seconds
 */
export function showResults(images, params, mode, seconds) {
  const results = el('results');
  for (const url of shownUrls) URL.revokeObjectURL(url);
  shownUrls = images.map((i) => i.url);
  results.replaceChildren();
  hidePreview();
  const grid = document.createElement('div');
  grid.className = images.length > 1 ? 'result-grid several' : 'result-grid';
  images.forEach((image, k) => {
    const figure = document.createElement('figure');
    figure.className = 'result';
    const img = document.createElement('img');
    img.src = image.url;
    img.alt = `Generated image ${k + 1} of ${images.length}: ${String(params.prompt).slice(0, 120)}`;
    const caption = document.createElement('figcaption');
    const seed = image.seed ?? (typeof params.seed === 'number' ? String(params.seed + k) : null);
    caption.append(list({ seed }));
    const useSeed = document.createElement('button');
    useSeed.type = 'button';
    useSeed.textContent = 'Use this seed';
    useSeed.addEventListener('click', () => {
      if (seed !== null) input('seed').value = seed;
      input('seed').focus();
    });
    const download = document.createElement('a');
    download.href = image.url;
    const kind = image.blob.type.split('/')[1] ?? 'img';
    download.download = `tiffin-${seed ?? 'image'}.${kind}`;
    download.textContent = `Download ${kind.toUpperCase()}`;
    caption.append(useSeed, ' ', download);
    figure.append(img, caption);
    grid.append(figure);
    if (seed !== null) lastSeed = seed;
  });
  /** @type {Record<string, unknown>} */
  const shown = { mode, ...params, seconds: seconds?.toFixed(1) };
  delete shown.seed;
  if (Array.isArray(params.lora_weights))
    shown.lora = params.lora_weights.map((l) => `${l.path} × ${l.weight}`).join(', ');
  const all = list(shown);
  all.className = 'result-params';
  results.append(grid, all);
  /** @type {HTMLButtonElement} */ (el('seed-reuse')).disabled = lastSeed === null;
  reveal(results);
}

/**
 * A definition list of the values given (the empty ones and the page's own left out).
 * @param {Record<string, unknown>} values
 */
function list(values) {
  const dl = document.createElement('dl');
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === null || UNSHOWN.has(key)) continue;
    const dt = document.createElement('dt');
    dt.textContent = key;
    const dd = document.createElement('dd');
    dd.textContent = String(value);
    dl.append(dt, dd);
  }
  return dl;
}

/** The seed of the last image shown, for "Reuse last". */
export function lastResultSeed() {
  return lastSeed;
}

/**
 * Shows a live preview of the running generation.
 * @param {string} dataUrl
 */
export function showPreview(dataUrl) {
  const img = /** @type {HTMLImageElement} */ (el('preview'));
  img.src = dataUrl;
  el('preview-figure').hidden = false;
}

/** No preview (a result came, or the generation was cancelled or failed: an old preview is no result). */
export function hidePreview() {
  el('preview-figure').hidden = true;
  el('preview').removeAttribute('src');
}
