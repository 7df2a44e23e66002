// @ts-check
// What the service serves, read from it: the generation APIs and their fields' bounds and defaults
// (`/docs.json`), the model's own defaults and largest size (`/defaults`), the LoRAs it allows (`/loras`) and the
// checkpoints a request may choose (`/models`).
import { api, errorText } from './api.js';

/** The generation kinds the page knows, in the order they are offered. */
export const MODES = /** @type {const} */ (['text2img', 'img2img', 'inpaint']);

/** @typedef {(typeof MODES)[number]} Mode */
/** @typedef {{ type?: string, default?: unknown, minimum?: number, maximum?: number, multipleOf?: number, maxLength?: number, enum?: unknown[], properties?: Record<string, Schema>, $ref?: string, anyOf?: Schema[], oneOf?: Schema[] }} Schema */
/** @typedef {{ scheduler?: string, num_inference_steps?: number, guidance_scale?: number, width?: number, height?: number, max_size?: number }} ModelDefaults */
/** @typedef {{ description: string, modes: Partial<Record<Mode, Schema>>, defaults: ModelDefaults, loras: string[], models: string[], defaultModel: string }} ServiceInfo */

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

/**
 * The names a field's schema allows (an enum, or the enums of its alternatives).
 * @param {Schema | undefined} schema
 * @returns {string[]}
 */
export function choices(schema) {
  const names = schema?.enum ?? schema?.anyOf?.flatMap((s) => s.enum ?? []) ?? [];
  return names.filter((n) => typeof n === 'string');
}

/** @returns {Promise<ServiceInfo>} */
export async function loadService() {
  const res = await api('/docs.json');
  if (!res.ok) throw new Error(`could not read the service description: ${await errorText(res)}`);
  const doc = await res.json();
  /** @type {ServiceInfo} */
  const info = {
    description: doc.info?.description ?? '',
    modes: {},
    defaults: {},
    loras: [],
    models: [],
    defaultModel: '',
  };
  for (const mode of MODES) {
    const submit = doc.paths?.[`/${mode}/submit`]?.post;
    if (!submit) continue;
    const content = submit.requestBody?.content ?? {};
    const body = content['application/json'] ?? content['multipart/form-data'];
    const schema = promptSchema(doc, body?.schema);
    if (schema) info.modes[mode] = schema;
  }
  if (!MODES.some((m) => info.modes[m]))
    throw new Error('this service serves no generation API the page knows');
  const [defaults, loras, models] = await Promise.all([
    doc.paths?.['/defaults'] ? api('/defaults') : null,
    doc.paths?.['/loras'] ? api('/loras') : null,
    doc.paths?.['/models'] ? api('/models') : null,
  ]);
  if (defaults?.ok) info.defaults = await defaults.json();
  if (loras?.ok) {
    const list = (await loras.json()).loras;
    for (const lora of Array.isArray(list) ? list : [])
      if (typeof lora?.name === 'string') info.loras.push(lora.name);
  }
  if (models?.ok) {
    // The start model first (the default), then the checkpoints of --models-dir.
    const listed = await models.json();
    for (const model of Array.isArray(listed.models) ? listed.models : [])
      if (typeof model?.name === 'string') info.models.push(model.name);
    info.defaultModel = typeof listed.default === 'string' ? listed.default : (info.models[0] ?? '');
  }
  return info;
}

/**
 * The model's defaults in words, for the line under the title.
 * @param {ModelDefaults} d
 */
export function defaultsText(d) {
  const parts = [];
  if (d.width && d.height) parts.push(`${d.width}×${d.height}`);
  if (d.num_inference_steps) parts.push(`${d.num_inference_steps} steps`);
  if (d.guidance_scale !== undefined) parts.push(`guidance ${d.guidance_scale}`);
  if (d.scheduler) parts.push(`${d.scheduler} scheduler`);
  const most = d.max_size ? `; sizes up to ${d.max_size} px, in steps of 8` : '';
  return parts.length ? `Model defaults: ${parts.join(', ')}${most}.` : '';
}
