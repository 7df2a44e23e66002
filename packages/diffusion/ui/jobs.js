// @ts-check
// The generations this tab has asked for, in order: the first is followed live (progress, ETA, previews), the
// others wait with their place in the service's queue. The list is kept in sessionStorage, so a reload picks the
// running job up again and still gets its image.
import { el, reveal, setStatus } from './dom.js';
import { remember } from './history.js';
import { hidePreview, showPreview, showResults } from './results.js';
import { MODES } from './service-info.js';
import { cancelTask, followTask, TaskGone, taskImages, taskStatus } from './task.js';

const JOBS_KEY = 'tiffin-ui-jobs';
/** How many generations one tab may have waiting at once. */
export const MOST_JOBS = 8;
/** How often the waiting jobs' places are asked for. */
const POLL_MS = 1500;

/** @typedef {{ id: string, mode: string, params: Record<string, unknown>, picture: Blob | null, mask: Blob | null, abort: AbortController, place: string }} Job */

/** @type {Job[]} */
const jobs = [];
let following = false;
/** @type {ReturnType<typeof setInterval> | null} */
let poller = null;
/** @type {() => void} */
let afterResult = () => {};

/** @param {() => void} callback what to do once a result is kept (the history shows it) */
export function onResult(callback) {
  afterResult = callback;
}

export function jobCount() {
  return jobs.length;
}

/**
 * A submitted generation joins the tab's queue.
 * @param {{ id: string, mode: string, params: Record<string, unknown>, picture: Blob | null, mask: Blob | null }} submitted
 */
export function enqueue(submitted) {
  jobs.push({ ...submitted, abort: new AbortController(), place: 'queued' });
  changed();
  if (jobs.length > 2) void pollPlaces();
  reveal(el('result-panel'));
  void pump();
}

/** After a reload: the jobs this tab had asked for, followed again. */
export function resumeJobs() {
  /** @type {Array<{ id: string, mode: string, params: Record<string, unknown> }>} */
  let saved = [];
  try {
    const list = JSON.parse(sessionStorage.getItem(JOBS_KEY) ?? '[]');
    if (Array.isArray(list)) saved = list.filter((j) => typeof j?.id === 'string' && MODES.includes(j?.mode));
  } catch {
    // nothing kept
  }
  if (saved.length === 0) return false;
  for (const j of saved.slice(0, MOST_JOBS))
    jobs.push({
      id: j.id,
      mode: j.mode,
      params: j.params ?? {},
      picture: null,
      mask: null,
      abort: new AbortController(),
      place: 'queued',
    });
  setStatus('Picking up the generation from before the reload…');
  changed();
  void pump();
  return true;
}

/** Cancels the generation that is running (the first of the tab's). */
export async function cancelCurrent() {
  const job = jobs[0];
  if (!job) return;
  /** @type {HTMLButtonElement} */ (el('cancel')).disabled = true;
  setStatus('Cancelling…');
  try {
    await cancelTask(job.mode, job.id);
  } catch (err) {
    setStatus(`Cancel failed: ${err instanceof Error ? err.message : String(err)}`, true);
  }
  // The events stream ends with `cancelled`; if it is stuck, stop following it.
  setTimeout(() => job.abort.abort(), 5000);
}

/** @param {Job} job */
async function removeQueued(job) {
  const at = jobs.indexOf(job);
  if (at <= 0) return;
  jobs.splice(at, 1);
  changed();
  await cancelTask(job.mode, job.id).catch(() => {});
}

/** Follows the tab's jobs, first to last, until none is left. */
async function pump() {
  if (following) return;
  following = true;
  try {
    while (jobs.length > 0) {
      await follow(jobs[0]);
      jobs.shift();
      changed();
    }
  } finally {
    following = false;
  }
}

/** @param {Job} job */
async function follow(job) {
  const progress = /** @type {HTMLProgressElement} */ (el('progress'));
  /** @type {{ step: number, at: number } | null} */
  let first = null;
  try {
    const outcome = await followTask(job.mode, job.id, job.abort.signal, (name, data) => {
      if (name === 'queued') {
        setStatus(`Queued${placeText(data)}…`);
      } else if (name === 'started' || name === 'running') {
        setStatus('Running…');
      } else if (name === 'step') {
        const step = Number(data.step) || 0;
        const total = Number(data.total_steps) || 1;
        const now = performance.now();
        if (first === null || step < first.step) first = { step, at: now };
        progress.hidden = false;
        progress.max = total;
        progress.value = step;
        const rate = (step - first.step) / ((now - first.at) / 1000);
        const eta = rate > 0 ? ` · about ${Math.max(1, Math.round((total - step) / rate))} s left` : '';
        setStatus(`Step ${step} of ${total}${eta}`);
        if (typeof data.preview === 'string' && data.preview.startsWith('data:image/'))
          showPreview(data.preview);
      }
    });
    if (outcome.status === 'done') {
      const images = await taskImages(job.mode, job.id);
      showResults(images, job.params, job.mode, outcome.seconds);
      setStatus(outcome.seconds === undefined ? 'Done.' : `Done in ${outcome.seconds.toFixed(1)} s.`);
      const seed = images[0]?.seed;
      await remember({
        at: new Date().toISOString(),
        mode: job.mode,
        params: seed ? { ...job.params, seed: Number(seed) } : job.params,
        images: images.map(({ blob, seed }) => ({ blob, seed })),
        picture: job.picture,
        mask: job.mask,
      }).catch(() => {});
      afterResult();
    } else {
      hidePreview();
      if (outcome.status === 'cancelled') setStatus('Cancelled.');
      else setStatus(`Failed: ${outcome.error ?? 'unknown error'}`, true);
    }
  } catch (err) {
    hidePreview();
    if (job.abort.signal.aborted) setStatus('Cancelled.');
    else if (err instanceof TaskGone)
      setStatus('That generation is gone from the server (it expired or the server restarted).', true);
    else setStatus(`Failed: ${err instanceof Error ? err.message : String(err)}`, true);
  } finally {
    progress.hidden = true;
  }
}

/**
 * ", position 2, about 14 s" from a queued event or status.
 * @param {Record<string, any>} data
 */
function placeText(data) {
  if (typeof data.queue_position !== 'number') return '';
  const eta = typeof data.eta_seconds === 'number' ? `, about ${Math.round(data.eta_seconds)} s` : '';
  return ` (position ${data.queue_position}${eta})`;
}

/** The waiting jobs' places, asked for while any waits. */
async function pollPlaces() {
  for (const job of jobs.slice(1)) {
    try {
      const view = await taskStatus(job.mode, job.id);
      job.place = view.status === 'queued' ? `queued${placeText(view)}` : String(view.status);
    } catch {
      job.place = 'unknown';
    }
  }
  renderQueue();
}

/** Saves the list, lists the waiting jobs, and polls their places while there are any. */
function changed() {
  const kept = jobs.map(({ id, mode, params }) => ({ id, mode, params }));
  if (kept.length > 0) sessionStorage.setItem(JOBS_KEY, JSON.stringify(kept));
  else sessionStorage.removeItem(JOBS_KEY);
  /** @type {HTMLButtonElement} */ (el('cancel')).disabled = jobs.length === 0;
  el('gen-form').setAttribute('aria-busy', String(jobs.length > 0));
  if (jobs.length > 1 && poller === null) {
    poller = setInterval(() => void pollPlaces(), POLL_MS);
    void pollPlaces();
  } else if (jobs.length <= 1 && poller !== null) {
    clearInterval(poller);
    poller = null;
  }
  renderQueue();
}

function renderQueue() {
  const ol = el('queue');
  ol.replaceChildren();
  for (const job of jobs.slice(1)) {
    const li = document.createElement('li');
    const text = document.createElement('span');
    const prompt = String(job.params.prompt ?? '').slice(0, 60);
    text.textContent = `${prompt} — ${job.place}`;
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.textContent = 'Remove';
    remove.setAttribute('aria-label', `Remove from the queue: ${prompt}`);
    remove.addEventListener('click', () => void removeQueued(job));
    li.append(text, ' ', remove);
    ol.append(li);
  }
  el('queue-section').hidden = jobs.length <= 1;
}
