// @ts-check
// The ControlNet panel: shown only when the service loaded ControlNets (`GET /models` lists them). One unit: a
// picture, the ControlNet to guide with, what is done to the picture first (none: it is the map already; canny:
// its edges, made by the service) and the unit's weight. The picture goes to the service as base64 with the request.
import { api } from './api.js';
import { el, input, setFormError } from './dom.js';

/** @type {{ image: string | null }} The chosen picture, as base64. */
const unit = { image: null };

/** Offers the service's ControlNets, or keeps the panel hidden when it has none. */
export async function setUpControlNet() {
  const res = await api('/models');
  if (!res.ok) return;
  const listed = await res.json();
  const names = Array.isArray(listed.controlnets)
    ? listed.controlnets.filter((/** @type {unknown} */ n) => typeof n === 'string')
    : [];
  if (names.length === 0) return;
  const select = /** @type {HTMLSelectElement} */ (el('controlnet-model'));
  for (const name of names) select.append(new Option(name, name));
  el('controlnet-inputs').hidden = false;
  input('controlnet-image').addEventListener('change', () => void onPictureChosen());
}

async function onPictureChosen() {
  const file = input('controlnet-image').files?.[0];
  unit.image = null;
  if (!file) return;
  const bytes = new Uint8Array(await file.arrayBuffer());
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  unit.image = btoa(text);
  setFormError('');
}

/**
 * The request's `controlnet` units: the panel's one, when it is shown and has a picture; else null.
 * @returns {Array<Record<string, unknown>> | null}
 */
export function controlnetUnits() {
  if (el('controlnet-inputs').hidden || !unit.image) return null;
  const weight = input('controlnet-weight').valueAsNumber;
  return [
    {
      model: input('controlnet-model').value,
      image: unit.image,
      module: input('controlnet-module').value,
      conditioning_scale: Number.isNaN(weight) ? 1 : weight,
    },
  ];
}
