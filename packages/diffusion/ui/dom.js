// @ts-check
// The page's elements and its two message lines: the shared bits every module of the page uses.

/**
 * The element with this id (the page is static: a missing one is a bug of the page).
 * @template {HTMLElement} T
 * @param {string} id
 * @returns {T}
 */
export function el(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return /** @type {T} */ (found);
}

/**
 * An input, select or textarea by id.
 * @param {string} id
 * @returns {HTMLInputElement}
 */
export function input(id) {
  return /** @type {HTMLInputElement} */ (el(id));
}

/**
 * The generation's status line (beside its progress and preview).
 * @param {string} text
 * @param {boolean} [isError]
 */
export function setStatus(text, isError = false) {
  const line = el('status');
  line.textContent = text;
  line.classList.toggle('error', isError);
}

/**
 * The form's own message (a field out of bounds, a missing prompt), beside the Generate button; empty clears it.
 * @param {string} text
 */
export function setFormError(text) {
  const line = el('form-error');
  line.textContent = text;
  line.hidden = text === '';
}

/**
 * Scrolls an element into view when it is not already near the top of the viewport: on a phone the result panel
 * is below the form, so what a tap on Generate starts must come to the reader.
 * @param {HTMLElement} target
 */
export function reveal(target) {
  const box = target.getBoundingClientRect();
  if (box.top >= 0 && box.bottom <= window.innerHeight) return;
  if (box.top >= 0 && box.top < window.innerHeight * 0.5) return;
  target.scrollIntoView({ block: 'start' });
}
