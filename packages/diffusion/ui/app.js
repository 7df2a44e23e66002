// @ts-check
// The generation page of `tiffin diffusion start`: plain platform code in ES modules, no framework, no build
// step, nothing fetched from elsewhere. It learns what the service serves from the service itself
// (service-info.js), runs every generation as a task so it can show progress and previews, cancel, queue
// several and pick a running one up after a reload (jobs.js, task.js), and keeps a full-size history in this
// browser (history.js). This file wires the form's controls to those.
import { controlnetUnits, setUpControlNet } from './controlnet.js';
import { el, input, setFormError, setStatus } from './dom.js';
import {
  currentMode,
  parameters,
  restoreParameters,
  setUpForm,
  snapSide,
  updateOutputs,
  validate,
} from './form.js';
import { clearHistory, renderHistory } from './history.js';
import { cancelCurrent, enqueue, jobCount, MOST_JOBS, onResult, resumeJobs } from './jobs.js';
import { clearMask, maskBlob, restoreMask, showPicture } from './mask.js';
import { lastResultSeed, showResults } from './results.js';
import { defaultsText, loadService } from './service-info.js';
import { submitTask } from './task.js';
import { fittedSize, pngAt } from './uploads.js';

/** @typedef {import('./history.js').HistoryEntry} HistoryEntry */

const form = /** @type {HTMLFormElement} */ (el('gen-form'));
/** @type {{ defaults: import('./service-info.js').ModelDefaults, picture: ImageBitmap | null, sending: boolean }} */
const page = { defaults: {}, picture: null, sending: false };

/** @param {SubmitEvent} event */
async function generate(event) {
  event.preventDefault();
  if (page.sending || !validate()) return;
  if (jobCount() >= MOST_JOBS) {
    setFormError(`${MOST_JOBS} generations are waiting already: wait for one to finish, or remove one.`);
    return;
  }
  const mode = currentMode();
  const params = { ...parameters(), output_format: 'png' };
  page.sending = true;
  try {
    setStatus('Submitting…');
    // The ControlNet picture goes with the request only: the history keeps the parameters without it.
    const controlnet = controlnetUnits();
    const { init, picture, mask } = await submitBody(mode, controlnet ? { ...params, controlnet } : params);
    const id = await submitTask(mode, init);
    enqueue({ id, mode, params, picture, mask });
  } catch (err) {
    setStatus(`Failed: ${err instanceof Error ? err.message : String(err)}`, true);
  } finally {
    page.sending = false;
  }
}

/**
 * The submit request of a mode: JSON for text2img; multipart for the image modes, the picture (and mask)
 * resized to the form's size first.
 * @param {string} mode
 * @param {Record<string, unknown>} params
 * @returns {Promise<{ init: RequestInit, picture: Blob | null, mask: Blob | null }>}
 */
async function submitBody(mode, params) {
  if (mode === 'text2img') {
    const body = JSON.stringify(params);
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
    return { init, picture: null, mask: null };
  }
  if (!page.picture) throw new Error('choose an image first');
  const { width, height, ...fields } = params;
  const [w, h] = [Number(width), Number(height)];
  const picture = await pngAt(page.picture, w, h);
  const data = new FormData();
  data.append(mode === 'img2img' ? 'img' : 'image', picture, 'image.png');
  const mask = mode === 'inpaint' ? await maskBlob(w, h) : null;
  if (mask) data.append('mask_image', mask, 'mask.png');
  data.append('data', new Blob([JSON.stringify(fields)], { type: 'application/json' }));
  return { init: { method: 'POST', body: data }, picture, mask };
}

/**
 * A chosen picture: shown under the mask brush, and the size fields set to what it is generated at.
 * @param {boolean} [keepSize] leave the size fields as they are (a restored entry set them)
 */
async function onImageChosen(keepSize = false) {
  const file = input('init-image').files?.[0];
  if (!file) return;
  try {
    page.picture = await createImageBitmap(file);
  } catch {
    setFormError('That file is not an image this browser can read.');
    return;
  }
  const fit = fittedSize(page.picture.width, page.picture.height, page.defaults);
  if (!keepSize) {
    input('width').value = String(fit.width);
    input('height').value = String(fit.height);
  }
  showPicture(
    page.picture,
    Number(input('width').value) || fit.width,
    Number(input('height').value) || fit.height,
  );
}

/** @param {HistoryEntry} entry */
async function restore(entry) {
  setFormError('');
  const seed = entry.images[0]?.seed ?? null;
  restoreParameters(/** @type {any} */ (entry.mode), entry.params, seed);
  if (entry.picture) {
    const files = new DataTransfer();
    files.items.add(new File([entry.picture], 'restored.png', { type: entry.picture.type }));
    input('init-image').files = files.files;
    await onImageChosen(true);
    if (entry.mask) await restoreMask(entry.mask);
  }
  const images = entry.images.map(({ blob, seed }) => ({ blob, seed, url: URL.createObjectURL(blob) }));
  showResults(images, entry.params, entry.mode, undefined);
  setStatus(`Restored the parameters of a generation from ${new Date(entry.at).toLocaleString()}.`);
  el('prompt').focus();
}

const showHistory = () => void renderHistory((entry) => void restore(entry));

form.addEventListener('submit', (event) => void generate(/** @type {SubmitEvent} */ (event)));
// Ctrl+Enter (Cmd+Enter on a Mac) submits from anywhere in the page, as in A1111 and ComfyUI.
document.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter' || !(event.ctrlKey || event.metaKey)) return;
  if (/** @type {HTMLDialogElement} */ (el('token-dialog')).open) return;
  event.preventDefault();
  form.requestSubmit();
});
el('cancel').addEventListener('click', () => void cancelCurrent());
el('seed-random').addEventListener('click', () => {
  input('seed').value = String(crypto.getRandomValues(new Uint32Array(1))[0]);
});
el('seed-reuse').addEventListener('click', () => {
  const seed = lastResultSeed();
  if (seed !== null) input('seed').value = seed;
});
for (const id of ['width', 'height']) input(id).addEventListener('change', () => snapSide(id));
input('init-image').addEventListener('change', () => void onImageChosen());
input('mask-file').addEventListener('change', clearMask);
input('strength').addEventListener('input', updateOutputs);
input('brush').addEventListener('input', updateOutputs);
el('history-clear').addEventListener('click', () => void clearHistory().then(showHistory));
onResult(showHistory);

showHistory();
loadService().then(
  (info) => {
    page.defaults = info.defaults;
    el('model-line').textContent = [info.description, defaultsText(info.defaults)].filter(Boolean).join(' ');
    setUpForm(info, () => setFormError(''));
    void setUpControlNet();
    if (!resumeJobs()) setStatus('Ready.');
  },
  (err) => setStatus(err instanceof Error ? err.message : String(err), true),
);
