// @ts-check
// The generation page of `tiffin diffusion start`: plain platform code, no framework, nothing fetched from
// elsewhere. It learns what the service serves from /docs.json (the APIs, their fields, bounds and defaults),
// runs every generation as a task (`/<api>/submit` → `events` → `get`) so it can show previews and cancel,
// and keeps a small history in this browser's localStorage.

/** The generation kinds the page knows, in the order they are offered. */
const MODES = /** @type {const} */ (['text2img', 'img2img', 'inpaint']);
const MODE_LABELS = { text2img: 'Text to image', img2img: 'Image to image', inpaint: 'Inpaint' };
const HISTORY_KEY = 'tiffin-ui-history';
const HISTORY_MAX = 24;
const THUMB_SIDE = 128;
const TOKEN_KEY = 'tiffin-ui-token';

/** @typedef {(typeof MODES)[number]} Mode */
/** @typedef {{ type?: string, default?: unknown, minimum?: number, maximum?: number, multipleOf?: number, enum?: unknown[], properties?: Record<string, Schema>, $ref?: string, anyOf?: Schema[], oneOf?: Schema[] }} Schema */
/** @typedef {{ url: string, seed: string | null, blob: Blob }} ResultImage */
/** @typedef {{ thumb: string, seed: string | null, params: Record<string, unknown>, mode: string, at: string }} HistoryEntry */

/**
 * @template {HTMLElement} T
 * @param {string} id
 * @returns {T}
 */
function el(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return /** @type {T} */ (found);
}

const form = /** @type {HTMLFormElement} */ (el('gen-form'));
const statusLine = el('status');
const progressBar = /** @type {HTMLProgressElement} */ (el('progress'));
const previewFigure = el('preview-figure');
const previewImg = /** @type {HTMLImageElement} */ (el('preview'));
const results = el('results');
const generateButton = /** @type {HTMLButtonElement} */ (el('generate'));
const cancelButton = /** @type {HTMLButtonElement} */ (el('cancel'));
const seedInput = /** @type {HTMLInputElement} */ (el('seed'));
const reuseButton = /** @type {HTMLButtonElement} */ (el('seed-reuse'));

/** @type {{ token: string | null, modes: Partial<Record<Mode, Schema>>, mode: Mode, running: { api: string, id: string, abort: AbortController } | null, lastSeed: string | null, maskDirty: boolean }} */
const state = {
  token: sessionStorage.getItem(TOKEN_KEY),
  modes: {},
  mode: 'text2img',
  running: null,
  lastSeed: null,
  maskDirty: false,
};

// ---- requests ------------------------------------------------------------------------------------------------

/**
 * fetch with the API token (asked for once on a 401, then kept for this tab).
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<Response>}
 */
async function api(path, init = {}) {
  for (;;) {
    const headers = new Headers(init.headers);
    if (state.token) headers.set('authorization', `Bearer ${state.token}`);
    const res = await fetch(path, { ...init, headers });
    if (res.status !== 401) return res;
    state.token = await askToken();
    sessionStorage.setItem(TOKEN_KEY, state.token);
  }
}

/** @returns {Promise<string>} */
function askToken() {
  const dialog = /** @type {HTMLDialogElement} */ (el('token-dialog'));
  const input = /** @type {HTMLInputElement} */ (el('token'));
  input.value = '';
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        const token = input.value.trim();
        if (token) resolve(token);
        else resolve(askToken());
      },
      { once: true },
    );
    dialog.showModal();
    input.focus();
  });
}

/**
 * The error a failed answer carries (the service's JSON error body), for the status line.
 * @param {Response} res
 */
async function errorText(res) {
  try {
    const body = await res.json();
    if (body && typeof body.error === 'string') return `${body.error}${body.code ? ` (${body.code})` : ''}`;
    if (body?.error?.message) return String(body.error.message);
  } catch {
    // not JSON: the status says enough
  }
  return `HTTP ${res.status}`;
}

// ---- what the service serves ---------------------------------------------------------------------------------

/**
 * @param {Record<string, any>} doc
 * @param {Schema | undefined} schema
 * @returns {Schema | undefined}
 */
function deref(doc, schema) {
  let s = schema;
  for (let hops = 0; s?.$ref && hops < 8; hops++) {
    const name = s.$ref.replace('#/components/schemas/', '');
    s = doc.components?.schemas?.[name];
  }
  return s;
}

/**
 * The object schema with a `prompt` field inside an API's request body (JSON body, or a multipart part).
 * @param {Record<string, any>} doc
 * @param {Schema | undefined} schema
 * @param {number} depth
 * @returns {Schema | undefined}
 */
function promptSchema(doc, schema, depth = 0) {
  const s = deref(doc, schema);
  if (!s || depth > 4) return undefined;
  if (s.properties?.prompt) return s;
  for (const child of [...Object.values(s.properties ?? {}), ...(s.anyOf ?? []), ...(s.oneOf ?? [])]) {
    const found = promptSchema(doc, child, depth + 1);
    if (found) return found;
  }
  return undefined;
}

async function loadService() {
  const res = await api('/docs.json');
  if (!res.ok) throw new Error(`could not read the service description: ${await errorText(res)}`);
  const doc = await res.json();
  el('model-line').textContent = doc.info?.description ?? '';
  for (const mode of MODES) {
    const submit = doc.paths?.[`/${mode}/submit`]?.post;
    if (!submit) continue;
    const content = submit.requestBody?.content ?? {};
    const body = content['application/json'] ?? content['multipart/form-data'];
    const schema = promptSchema(doc, body?.schema);
    if (schema) state.modes[mode] = schema;
  }
  const offered = MODES.filter((m) => state.modes[m]);
  if (offered.length === 0) throw new Error('this service serves no generation API the page knows');
  const set = el('mode-set');
  for (const mode of offered) {
    const label = document.createElement('label');
    const radio = document.createElement('input');
    radio.type = 'radio';
    radio.name = 'mode';
    radio.value = mode;
    radio.checked = mode === offered[0];
    radio.addEventListener('change', () => selectMode(mode));
    label.append(radio, MODE_LABELS[mode]);
    set.append(label);
  }
  selectMode(offered[0]);
  await loadLoras();
}

/** @param {Mode} mode */
function selectMode(mode) {
  state.mode = mode;
  const schema = /** @type {Schema} */ (state.modes[mode]);
  const props = schema.properties ?? {};
  el('image-inputs').hidden = mode === 'text2img';
  el('mask-inputs').hidden = mode !== 'inpaint';
  el('strength-row').hidden = !props.strength;
  applyField('width', props.width);
  applyField('height', props.height);
  applyField('steps', props.num_inference_steps);
  applyField('guidance', props.guidance_scale);
  applyField('count', props.num_images_per_prompt);
  applyField('strength', props.strength);
  // Width and height come from the uploaded image where there is one.
  for (const id of ['width', 'height'])
    el(id)
      .closest('div')
      ?.toggleAttribute('hidden', mode !== 'text2img');
  const scheduler = /** @type {HTMLSelectElement} */ (el('scheduler'));
  const names =
    deref({}, props.scheduler)?.enum ?? props.scheduler?.anyOf?.flatMap((s) => s.enum ?? []) ?? [];
  const chosen = scheduler.value;
  scheduler.replaceChildren(new Option("the model's default", ''));
  for (const name of names) if (typeof name === 'string') scheduler.append(new Option(name, name));
  scheduler.value = names.includes(chosen) ? chosen : '';
  updateOutputs();
}

/**
 * A number input's bounds and default from its schema.
 * @param {string} id
 * @param {Schema | undefined} schema
 */
function applyField(id, schema) {
  const input = /** @type {HTMLInputElement} */ (el(id));
  if (!schema) return;
  if (schema.minimum !== undefined) input.min = String(schema.minimum);
  if (schema.maximum !== undefined) input.max = String(schema.maximum);
  if (schema.multipleOf !== undefined) input.step = String(schema.multipleOf);
  if (typeof schema.default === 'number') input.value = String(schema.default);
}

async function loadLoras() {
  const res = await api('/loras');
  if (!res.ok) return;
  const { loras } = await res.json();
  const select = /** @type {HTMLSelectElement} */ (el('lora'));
  for (const lora of Array.isArray(loras) ? loras : []) {
    if (typeof lora?.name === 'string') select.append(new Option(lora.name, lora.name));
  }
}

// ---- a generation --------------------------------------------------------------------------------------------

/** The request's fields from the form, as the API names them. */
function parameters() {
  /** @type {Record<string, unknown>} */
  const p = { prompt: /** @type {HTMLTextAreaElement} */ (el('prompt')).value };
  const negative = /** @type {HTMLTextAreaElement} */ (el('negative_prompt')).value.trim();
  if (negative) p.negative_prompt = negative;
  /** @param {string} id */
  const num = (id) => /** @type {HTMLInputElement} */ (el(id)).valueAsNumber;
  if (state.mode === 'text2img') {
    p.width = num('width');
    p.height = num('height');
  }
  p.num_inference_steps = num('steps');
  p.guidance_scale = num('guidance');
  p.num_images_per_prompt = num('count');
  if (state.modes[state.mode]?.properties?.strength) p.strength = num('strength');
  const scheduler = /** @type {HTMLSelectElement} */ (el('scheduler')).value;
  if (scheduler) p.scheduler = scheduler;
  const lora = /** @type {HTMLSelectElement} */ (el('lora')).value;
  if (lora) p.lora_weights = [{ path: lora, weight: num('lora-weight') }];
  if (seedInput.value !== '') p.seed = seedInput.valueAsNumber;
  for (const [k, v] of Object.entries(p)) if (typeof v === 'number' && Number.isNaN(v)) delete p[k];
  return p;
}

/**
 * The submit request of the current mode: JSON for text2img, multipart for the image modes.
 * @param {Record<string, unknown>} params
 * @returns {Promise<RequestInit>}
 */
async function submitBody(params) {
  if (state.mode === 'text2img') {
    return { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(params) };
  }
  const file = /** @type {HTMLInputElement} */ (el('init-image')).files?.[0];
  if (!file) throw new Error('choose an image first');
  const data = new FormData();
  const json = new Blob([JSON.stringify(params)], { type: 'application/json' });
  if (state.mode === 'img2img') {
    data.append('img', file);
    data.append('data', json);
  } else {
    data.append('image', file);
    data.append('mask_image', await maskBlob(), 'mask.png');
    data.append('data', json);
  }
  return { method: 'POST', body: data };
}

/** @param {SubmitEvent} event */
async function generate(event) {
  event.preventDefault();
  if (state.running) return;
  const prompt = /** @type {HTMLTextAreaElement} */ (el('prompt'));
  if (!prompt.value.trim()) {
    setStatus('Write a prompt first.', true);
    prompt.focus();
    return;
  }
  const mode = state.mode;
  const params = parameters();
  const abort = new AbortController();
  let id = '';
  try {
    const init = await submitBody(params);
    setStatus('Submitting…');
    const res = await api(`/${mode}/submit?preview=true`, { ...init, signal: abort.signal });
    if (res.status !== 202) throw new Error(await errorText(res));
    id = (await res.json()).id;
    state.running = { api: mode, id, abort };
    setRunning(true);
    setStatus('Queued…');
    const outcome = await followEvents(mode, id, abort.signal);
    if (outcome.status === 'done') {
      const images = await fetchImages(mode, id);
      showResults(images, params, mode, outcome.seconds);
      setStatus(`Done in ${outcome.seconds?.toFixed(1) ?? '?'} s.`);
    } else if (outcome.status === 'cancelled') {
      setStatus('Cancelled.');
    } else {
      setStatus(`Failed: ${outcome.error ?? 'unknown error'}`, true);
    }
  } catch (err) {
    if (abort.signal.aborted) setStatus('Cancelled.');
    else setStatus(`Failed: ${err instanceof Error ? err.message : String(err)}`, true);
  } finally {
    state.running = null;
    setRunning(false);
  }
}

/**
 * Follows a task's server-sent events until it ends; shows progress and previews on the way.
 * @param {string} mode
 * @param {string} id
 * @param {AbortSignal} signal
 * @returns {Promise<{ status: string, seconds?: number, error?: string }>}
 */
async function followEvents(mode, id, signal) {
  const res = await api(`/${mode}/events?id=${encodeURIComponent(id)}`, { signal });
  if (!res.ok || !res.body) throw new Error(await errorText(res));
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { status: 'failed', error: 'the event stream ended early' };
    buffer += value;
    let cut = buffer.indexOf('\n\n');
    while (cut >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf('\n\n');
      const event = parseEvent(block);
      if (!event) continue;
      const data = event.data;
      if (event.name === 'started') setStatus('Running…');
      else if (event.name === 'queued' && typeof data.queue_position === 'number')
        setStatus(`Queued (position ${data.queue_position})…`);
      else if (event.name === 'step') {
        progressBar.hidden = false;
        progressBar.max = Number(data.total_steps) || 1;
        progressBar.value = Number(data.step) || 0;
        setStatus(`Step ${data.step} of ${data.total_steps}`);
        if (typeof data.preview === 'string' && data.preview.startsWith('data:image/')) {
          previewImg.src = data.preview;
          previewFigure.hidden = false;
        }
      } else if (['done', 'failed', 'cancelled'].includes(event.name)) {
        await reader.cancel().catch(() => {});
        return { status: event.name, seconds: data.seconds, error: data.error };
      }
    }
  }
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
 * The finished task's images: one image, or a multipart/mixed answer with a part (and an x-seed) per image.
 * @param {string} mode
 * @param {string} id
 * @returns {Promise<ResultImage[]>}
 */
async function fetchImages(mode, id) {
  const res = await api(`/${mode}/get?id=${encodeURIComponent(id)}`, {
    headers: { accept: 'image/png, */*' },
  });
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

/**
 * @param {ResultImage[]} images
 * @param {Record<string, unknown>} params
 * @param {string} mode
 * @param {number | undefined} seconds
 */
function showResults(images, params, mode, seconds) {
  results.replaceChildren();
  previewFigure.hidden = true;
  images.forEach((image, k) => {
    const figure = document.createElement('figure');
    figure.className = 'result';
    const img = document.createElement('img');
    img.src = image.url;
    img.alt = `Generated image ${k + 1}: ${String(params.prompt).slice(0, 120)}`;
    const caption = document.createElement('figcaption');
    const list = document.createElement('dl');
    /** @type {Record<string, unknown>} */
    const shown = { ...params, seed: image.seed ?? params.seed, mode, seconds: seconds?.toFixed(1) };
    delete shown.lora_weights;
    if (Array.isArray(params.lora_weights))
      shown.lora = params.lora_weights.map((l) => `${l.path} × ${l.weight}`).join(', ');
    for (const [key, value] of Object.entries(shown)) {
      if (value === undefined || value === null) continue;
      const dt = document.createElement('dt');
      dt.textContent = key;
      const dd = document.createElement('dd');
      dd.textContent = String(value);
      list.append(dt, dd);
    }
    const useSeed = document.createElement('button');
    useSeed.type = 'button';
    useSeed.textContent = 'Use this seed';
    useSeed.addEventListener('click', () => {
      if (image.seed !== null) seedInput.value = image.seed;
      seedInput.focus();
    });
    const download = document.createElement('a');
    download.href = image.url;
    download.download = `tiffin-${image.seed ?? 'image'}.${image.blob.type.split('/')[1] ?? 'img'}`;
    download.textContent = 'Download';
    caption.append(list, useSeed, ' ', download);
    figure.append(img, caption);
    results.append(figure);
    if (image.seed !== null) state.lastSeed = image.seed;
    void remember(image, params, mode);
  });
  reuseButton.disabled = state.lastSeed === null;
}

async function cancel() {
  const running = state.running;
  if (!running) return;
  cancelButton.disabled = true;
  setStatus('Cancelling…');
  const res = await api(`/${running.api}/cancel?id=${encodeURIComponent(running.id)}`, { method: 'POST' });
  if (!res.ok) setStatus(`Cancel failed: ${await errorText(res)}`, true);
  // The events stream ends with `cancelled`; if it is stuck, stop following it.
  setTimeout(() => running.abort.abort(), 5000);
}

/** @param {boolean} running */
function setRunning(running) {
  generateButton.disabled = running;
  cancelButton.disabled = !running;
  form.setAttribute('aria-busy', String(running));
  if (!running) progressBar.hidden = true;
}

/**
 * @param {string} text
 * @param {boolean} [isError]
 */
function setStatus(text, isError = false) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', isError);
}

// ---- history -------------------------------------------------------------------------------------------------

/** @returns {HistoryEntry[]} */
function readHistory() {
  try {
    const list = JSON.parse(localStorage.getItem(HISTORY_KEY) ?? '[]');
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

/**
 * Keeps a thumbnail and the parameters of a result; the oldest go first when storage is full.
 * @param {ResultImage} image
 * @param {Record<string, unknown>} params
 * @param {string} mode
 */
async function remember(image, params, mode) {
  const bitmap = await createImageBitmap(image.blob);
  const scale = Math.min(1, THUMB_SIDE / Math.max(bitmap.width, bitmap.height));
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  canvas.getContext('2d')?.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  const entry = {
    thumb: canvas.toDataURL('image/png'),
    seed: image.seed,
    params,
    mode,
    at: new Date().toISOString(),
  };
  let list = [entry, ...readHistory()].slice(0, HISTORY_MAX);
  while (list.length > 0) {
    try {
      localStorage.setItem(HISTORY_KEY, JSON.stringify(list));
      break;
    } catch {
      list = list.slice(0, -1); // quota: drop the oldest
    }
  }
  renderHistory();
}

function renderHistory() {
  const ol = el('history');
  ol.replaceChildren();
  for (const entry of readHistory()) {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    const img = document.createElement('img');
    img.src = entry.thumb;
    img.alt = '';
    const label = document.createElement('span');
    label.textContent = `${String(entry.params.prompt ?? '').slice(0, 60)} (seed ${entry.seed ?? '?'})`;
    button.append(img, label);
    button.setAttribute('aria-label', `Restore the parameters of: ${label.textContent}`);
    button.addEventListener('click', () => restore(entry));
    li.append(button);
    ol.append(li);
  }
}

/** @param {HistoryEntry} entry */
function restore(entry) {
  const p = entry.params;
  /**
   * @param {string} id
   * @param {unknown} value
   */
  const set = (id, value) => {
    if (value !== undefined && value !== null) /** @type {HTMLInputElement} */ (el(id)).value = String(value);
  };
  set('prompt', p.prompt);
  set('negative_prompt', p.negative_prompt ?? '');
  set('width', p.width);
  set('height', p.height);
  set('steps', p.num_inference_steps);
  set('guidance', p.guidance_scale);
  set('scheduler', p.scheduler ?? '');
  set('count', p.num_images_per_prompt);
  set('seed', entry.seed ?? '');
  el('prompt').focus();
}

// ---- the mask brush ------------------------------------------------------------------------------------------

const maskCanvas = /** @type {HTMLCanvasElement} */ (el('mask-canvas'));
const maskBase = /** @type {HTMLCanvasElement} */ (el('mask-base'));
const maskCtx = /** @type {CanvasRenderingContext2D} */ (maskCanvas.getContext('2d'));
const brushInput = /** @type {HTMLInputElement} */ (el('brush'));
let cursor = { x: 0, y: 0 };
let painting = false;

/** Sizes both canvases to the chosen image and draws it under the mask. */
async function onImageChosen() {
  const file = /** @type {HTMLInputElement} */ (el('init-image')).files?.[0];
  if (!file) return;
  const bitmap = await createImageBitmap(file);
  for (const canvas of [maskBase, maskCanvas]) {
    canvas.width = bitmap.width;
    canvas.height = bitmap.height;
  }
  maskBase.getContext('2d')?.drawImage(bitmap, 0, 0);
  clearMask();
  cursor = { x: bitmap.width / 2, y: bitmap.height / 2 };
}

function clearMask() {
  maskCtx.clearRect(0, 0, maskCanvas.width, maskCanvas.height);
  state.maskDirty = false;
}

/**
 * @param {number} x
 * @param {number} y
 */
function dab(x, y) {
  maskCtx.fillStyle = '#ffffff';
  maskCtx.beginPath();
  maskCtx.arc(x, y, Number(brushInput.value) / 2, 0, Math.PI * 2);
  maskCtx.fill();
  state.maskDirty = true;
}

/** @param {PointerEvent} event */
function canvasPoint(event) {
  const box = maskCanvas.getBoundingClientRect();
  return {
    x: ((event.clientX - box.left) / box.width) * maskCanvas.width,
    y: ((event.clientY - box.top) / box.height) * maskCanvas.height,
  };
}

maskCanvas.addEventListener('pointerdown', (event) => {
  painting = true;
  maskCanvas.setPointerCapture(event.pointerId);
  cursor = canvasPoint(event);
  dab(cursor.x, cursor.y);
});
maskCanvas.addEventListener('pointermove', (event) => {
  if (!painting) return;
  cursor = canvasPoint(event);
  dab(cursor.x, cursor.y);
});
maskCanvas.addEventListener('pointerup', () => {
  painting = false;
});
// Keyboard painting: arrows move the brush, Space or Enter paints where it is.
maskCanvas.addEventListener('keydown', (event) => {
  const step = Math.max(1, Number(brushInput.value) / 2);
  const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
  const move = moves[/** @type {keyof typeof moves} */ (event.key)];
  if (move) {
    cursor = {
      x: Math.min(maskCanvas.width, Math.max(0, cursor.x + move[0])),
      y: Math.min(maskCanvas.height, Math.max(0, cursor.y + move[1])),
    };
    if (event.shiftKey) dab(cursor.x, cursor.y);
    event.preventDefault();
  } else if (event.key === ' ' || event.key === 'Enter') {
    dab(cursor.x, cursor.y);
    event.preventDefault();
  }
});

/** The mask as the API takes it: white where to repaint, black elsewhere, at the image's size. */
async function maskBlob() {
  const upload = /** @type {HTMLInputElement} */ (el('mask-file')).files?.[0];
  if (upload && !state.maskDirty) return upload;
  if (!state.maskDirty) throw new Error('paint the area to repaint, or upload a mask');
  const out = document.createElement('canvas');
  out.width = maskCanvas.width;
  out.height = maskCanvas.height;
  const ctx = /** @type {CanvasRenderingContext2D} */ (out.getContext('2d'));
  ctx.fillStyle = '#000000';
  ctx.fillRect(0, 0, out.width, out.height);
  ctx.drawImage(maskCanvas, 0, 0);
  return new Promise((resolve, reject) =>
    out.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('could not draw the mask'))), 'image/png'),
  );
}

// ---- wiring --------------------------------------------------------------------------------------------------

function updateOutputs() {
  el('strength-out').textContent = /** @type {HTMLInputElement} */ (el('strength')).value;
  el('brush-out').textContent = brushInput.value;
}

form.addEventListener('submit', (event) => void generate(/** @type {SubmitEvent} */ (event)));
cancelButton.addEventListener('click', () => void cancel());
el('seed-random').addEventListener('click', () => {
  seedInput.value = String(crypto.getRandomValues(new Uint32Array(1))[0]);
});
reuseButton.addEventListener('click', () => {
  if (state.lastSeed !== null) seedInput.value = state.lastSeed;
});
el('init-image').addEventListener('change', () => void onImageChosen());
el('mask-clear').addEventListener('click', clearMask);
el('strength').addEventListener('input', updateOutputs);
brushInput.addEventListener('input', updateOutputs);
el('history-clear').addEventListener('click', () => {
  localStorage.removeItem(HISTORY_KEY);
  renderHistory();
});

renderHistory();
loadService().then(
  () => setStatus('Ready.'),
  (err) => setStatus(err instanceof Error ? err.message : String(err), true),
);
