// @ts-check
// The form: the fields as the chosen mode's API bounds them (from `/docs.json`), the request's parameters read
// from it, their check before a request is sent, and a history entry's parameters put back into it.
import { el, input, setFormError } from './dom.js';
import { choices, MODES } from './service-info.js';

/** @typedef {import('./service-info.js').Mode} Mode */
/** @typedef {import('./service-info.js').Schema} Schema */
/** @typedef {import('./service-info.js').ServiceInfo} ServiceInfo */

const MODE_LABELS = { text2img: 'Text to image', img2img: 'Image to image', inpaint: 'Inpaint' };
/** Sides are multiples of this (SD's VAE scale factor). */
export const SIZE_STEP = 8;

/** @type {{ info: ServiceInfo | null, mode: Mode }} */
const form = { info: null, mode: 'text2img' };

/** The mode now chosen. */
export function currentMode() {
  return form.mode;
}

/** The chosen mode's request fields. */
function fields() {
  return form.info?.modes[form.mode]?.properties ?? {};
}

/**
 * Offers the modes the service serves and fills the LoRA choices.
 * @param {ServiceInfo} info
 * @param {(mode: Mode) => void} onMode
 */
export function setUpForm(info, onMode) {
  form.info = info;
  const offered = MODES.filter((m) => info.modes[m]);
  const set = el('mode-set');
  for (const mode of offered) {
    const label = document.createElement('label');
    const radio = document.createElement('input');
    radio.type = 'radio';
    radio.name = 'mode';
    radio.value = mode;
    radio.checked = mode === offered[0];
    radio.addEventListener('change', () => {
      selectMode(mode);
      onMode(mode);
    });
    label.append(radio, MODE_LABELS[mode]);
    set.append(label);
  }
  const lora = /** @type {HTMLSelectElement} */ (el('lora'));
  for (const name of info.loras) lora.append(new Option(name, name));
  // The checkpoint picker: only where there is a choice (a --models-dir beside the start model).
  const model = /** @type {HTMLSelectElement} */ (el('model'));
  for (const name of info.models)
    model.append(new Option(name === info.defaultModel ? `${name} (the default)` : name, name));
  model.value = info.defaultModel;
  el('model-row').hidden = info.models.length < 2;
  selectMode(offered[0]);
}

/** @param {Mode} mode */
export function selectMode(mode) {
  form.mode = mode;
  const radio = document.querySelector(`input[name="mode"][value="${mode}"]`);
  if (radio instanceof HTMLInputElement) radio.checked = true;
  const props = fields();
  el('image-inputs').hidden = mode === 'text2img';
  el('mask-inputs').hidden = mode !== 'inpaint';
  el('strength-row').hidden = !props.strength;
  const text2img = form.info?.modes.text2img?.properties ?? {};
  const most = form.info?.defaults.max_size;
  for (const id of ['width', 'height']) {
    // The image modes take their size from the upload, which the page resizes to these fields first.
    const side = props[id] ?? text2img[id] ?? { minimum: SIZE_STEP, maximum: most, multipleOf: SIZE_STEP };
    applyField(id, { ...side, default: input(id).value ? undefined : side.default });
  }
  applyField('steps', props.num_inference_steps);
  applyField('guidance', props.guidance_scale);
  applyField('count', props.num_images_per_prompt);
  applyField('strength', props.strength);
  applyField('seed', props.seed);
  for (const id of ['prompt', 'negative_prompt']) {
    const limit = props[id]?.maxLength;
    if (limit !== undefined) /** @type {HTMLTextAreaElement} */ (el(id)).maxLength = limit;
  }
  const scheduler = /** @type {HTMLSelectElement} */ (el('scheduler'));
  const names = choices(props.scheduler);
  const chosen = scheduler.value;
  const named = form.info?.defaults.scheduler;
  // The model's own first (a phone's narrow select shows the start of it).
  scheduler.replaceChildren(new Option(named ? `${named} (the model's default)` : "the model's default", ''));
  for (const name of names) scheduler.append(new Option(name, name));
  scheduler.value = names.includes(chosen) ? chosen : '';
  updateOutputs();
}

/**
 * A number input's bounds and default from its schema.
 * @param {string} id
 * @param {Schema | undefined} schema
 */
function applyField(id, schema) {
  const field = input(id);
  if (!schema) return;
  if (schema.minimum !== undefined) field.min = String(schema.minimum);
  if (schema.maximum !== undefined) field.max = String(schema.maximum);
  if (schema.multipleOf !== undefined) field.step = String(schema.multipleOf);
  if (typeof schema.default === 'number') field.value = String(schema.default);
}

/**
 * A side snapped to a multiple of 8 within the field's bounds (as the service would round it).
 * @param {string} id
 */
export function snapSide(id) {
  const field = input(id);
  if (field.value === '' || Number.isNaN(field.valueAsNumber)) return;
  const low = Number(field.min) || SIZE_STEP;
  const high = Number(field.max) || Number.POSITIVE_INFINITY;
  const snapped = Math.round(field.valueAsNumber / SIZE_STEP) * SIZE_STEP;
  field.value = String(Math.min(high, Math.max(low, snapped)));
}

/** The labels of the number fields, for messages. */
const FIELD_NAMES = {
  width: 'Width',
  height: 'Height',
  steps: 'Steps',
  guidance: 'Guidance',
  count: 'Images',
  strength: 'Strength',
  'lora-weight': 'LoRA weight',
  seed: 'Seed',
};

/**
 * Checks the fields against the bounds `/docs.json` gives before anything is sent; on a mistake it says which
 * field and what it takes, marks it, focuses it and answers false.
 */
export function validate() {
  setFormError('');
  for (const f of document.querySelectorAll('#gen-form [aria-invalid="true"]'))
    f.removeAttribute('aria-invalid');
  const prompt = /** @type {HTMLTextAreaElement} */ (el('prompt'));
  if (!prompt.value.trim()) return refuse(prompt, 'Write a prompt first.');
  for (const [id, name] of Object.entries(FIELD_NAMES)) {
    const field = input(id);
    if (field.closest('[hidden]') || (field.value === '' && id === 'seed')) continue;
    const v = field.validity;
    const bounds = `${field.min !== '' ? ` from ${field.min}` : ''}${field.max !== '' ? ` to ${field.max}` : ''}`;
    if (v.badInput || field.value === '') return refuse(field, `${name} needs a number${bounds}.`);
    if (v.rangeUnderflow || v.rangeOverflow) return refuse(field, `${name} takes values${bounds}.`);
    if (v.stepMismatch) return refuse(field, `${name} takes steps of ${field.step}${bounds}.`);
  }
  if (form.mode !== 'text2img' && !input('init-image').files?.[0])
    return refuse(input('init-image'), 'Choose an image first.');
  return true;
}

/**
 * @param {HTMLElement} field
 * @param {string} message
 */
function refuse(field, message) {
  setFormError(message);
  field.setAttribute('aria-invalid', 'true');
  field.focus();
  return false;
}

/**
 * The request's fields from the form, as the API names them, with the size the page sends its image at.
 * @returns {Record<string, unknown>}
 */
export function parameters() {
  /** @type {Record<string, unknown>} */
  const p = { prompt: /** @type {HTMLTextAreaElement} */ (el('prompt')).value };
  const negative = /** @type {HTMLTextAreaElement} */ (el('negative_prompt')).value.trim();
  if (negative) p.negative_prompt = negative;
  /** @param {string} id */
  const num = (id) => input(id).valueAsNumber;
  p.width = num('width');
  p.height = num('height');
  p.num_inference_steps = num('steps');
  p.guidance_scale = num('guidance');
  p.num_images_per_prompt = num('count');
  if (fields().strength) p.strength = num('strength');
  const scheduler = input('scheduler').value;
  if (scheduler) p.scheduler = scheduler;
  const model = input('model').value;
  if (!el('model-row').hidden && model && model !== form.info?.defaultModel) p.model = model;
  const lora = input('lora').value;
  if (lora) p.lora_weights = [{ path: lora, weight: num('lora-weight') }];
  if (input('seed').value !== '') p.seed = num('seed');
  for (const [k, v] of Object.entries(p)) if (typeof v === 'number' && Number.isNaN(v)) delete p[k];
  return p;
}

/**
 * Puts a history entry's parameters back, its mode first (which sets the fields' bounds).
 * @param {Mode} mode
 * @param {Record<string, unknown>} p
 * @param {string | null} seed
 */
export function restoreParameters(mode, p, seed) {
  if (form.info?.modes[mode]) selectMode(mode);
  /**
   * @param {string} id
   * @param {unknown} value
   */
  const set = (id, value) => {
    if (value !== undefined && value !== null) input(id).value = String(value);
  };
  set('prompt', p.prompt);
  set('negative_prompt', p.negative_prompt ?? '');
  set('width', p.width);
  set('height', p.height);
  set('steps', p.num_inference_steps);
  set('guidance', p.guidance_scale);
  set('strength', p.strength);
  set('count', p.num_images_per_prompt);
  set('seed', seed ?? p.seed ?? '');
  const scheduler = /** @type {HTMLSelectElement} */ (el('scheduler'));
  scheduler.value = typeof p.scheduler === 'string' ? p.scheduler : '';
  if (scheduler.value !== (p.scheduler ?? '')) scheduler.value = '';
  const model = /** @type {HTMLSelectElement} */ (el('model'));
  model.value = typeof p.model === 'string' ? p.model : (form.info?.defaultModel ?? '');
  if (typeof p.model === 'string' && model.value !== p.model) {
    model.value = form.info?.defaultModel ?? '';
    setFormError(`The checkpoint ${p.model} is not offered by this server.`);
  }
  const lora = Array.isArray(p.lora_weights) ? p.lora_weights[0] : null;
  const select = /** @type {HTMLSelectElement} */ (el('lora'));
  select.value = lora?.path ?? '';
  if (lora && select.value !== lora.path)
    setFormError(`The LoRA ${lora.path} is not offered by this server.`);
  set('lora-weight', lora?.weight ?? 1);
  updateOutputs();
}

/** The live values beside the range inputs. */
export function updateOutputs() {
  el('strength-out').textContent = input('strength').value;
  el('brush-out').textContent = input('brush').value;
}
