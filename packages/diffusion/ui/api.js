// @ts-check
// Calls to the service with its API token: asked for on a 401, kept for this tab, and asked for again with a
// visible message when the server refuses the one given.
import { el, input } from './dom.js';

const TOKEN_KEY = 'tiffin-ui-token';

let token = sessionStorage.getItem(TOKEN_KEY);
/** @type {Promise<string> | null} One question at a time, however many calls met the 401. */
let asking = null;

/**
 * fetch with the API token.
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<Response>}
 */
export async function api(path, init = {}) {
  for (;;) {
    const sent = token;
    const headers = new Headers(init.headers);
    if (sent) headers.set('authorization', `Bearer ${sent}`);
    const res = await fetch(path, { ...init, headers });
    if (res.status !== 401) return res;
    // Another call may have been answered a new token meanwhile: retry with it before asking.
    if (token !== sent && token) continue;
    asking ??= askToken(sent ? 'The server refused that token: check it and try again.' : '').finally(() => {
      asking = null;
    });
    token = await asking;
    sessionStorage.setItem(TOKEN_KEY, token);
  }
}

/**
 * @param {string} message shown above the field (empty: none)
 * @returns {Promise<string>}
 */
function askToken(message) {
  const dialog = /** @type {HTMLDialogElement} */ (el('token-dialog'));
  const field = input('token');
  const error = el('token-error');
  error.textContent = message;
  error.hidden = message === '';
  field.value = '';
  field.setAttribute('aria-invalid', String(message !== ''));
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        const given = field.value.trim();
        resolve(given || askToken('Enter the API token to use this server.'));
      },
      { once: true },
    );
    dialog.showModal();
    field.focus();
  });
}

/**
 * The error a failed answer carries (the service's JSON error body), for the status line.
 * @param {Response} res
 */
export async function errorText(res) {
  try {
    const body = await res.json();
    if (body && typeof body.error === 'string') return `${body.error}${body.code ? ` (${body.code})` : ''}`;
    if (body?.error?.message) return String(body.error.message);
  } catch {
    // not JSON: the status says enough
  }
  return `HTTP ${res.status}`;
}
