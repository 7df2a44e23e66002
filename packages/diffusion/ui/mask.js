// @ts-check
// The inpainting mask: a brush over the chosen picture (mouse, touch, or the keyboard: arrows move, Space or
// Enter paints, Shift+arrows paint as they move), or an uploaded mask; sent white where to repaint.
import { el, input } from './dom.js';
import { pngAt } from './uploads.js';

const canvas = /** @type {HTMLCanvasElement} */ (el('mask-canvas'));
const base = /** @type {HTMLCanvasElement} */ (el('mask-base'));
const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
const brush = input('brush');
let cursor = { x: 0, y: 0 };
let painting = false;
let dirty = false;

/**
 * Sizes both canvases to the picture as it will be sent and draws it under the mask.
 * @param {ImageBitmap} picture
 * @param {number} width
 * @param {number} height
 */
export function showPicture(picture, width, height) {
  for (const c of [base, canvas]) {
    c.width = width;
    c.height = height;
  }
  base.getContext('2d')?.drawImage(picture, 0, 0, width, height);
  const stack = canvas.parentElement;
  if (stack) stack.style.aspectRatio = `${width} / ${height}`;
  clearMask();
  cursor = { x: width / 2, y: height / 2 };
}

export function clearMask() {
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  dirty = false;
}

/**
 * @param {number} x
 * @param {number} y
 */
function dab(x, y) {
  ctx.fillStyle = '#ffffff';
  ctx.beginPath();
  ctx.arc(x, y, Number(brush.value) / 2, 0, Math.PI * 2);
  ctx.fill();
  dirty = true;
}

/** @param {PointerEvent} event */
function canvasPoint(event) {
  const box = canvas.getBoundingClientRect();
  return {
    x: ((event.clientX - box.left) / box.width) * canvas.width,
    y: ((event.clientY - box.top) / box.height) * canvas.height,
  };
}

canvas.addEventListener('pointerdown', (event) => {
  painting = true;
  canvas.setPointerCapture(event.pointerId);
  cursor = canvasPoint(event);
  dab(cursor.x, cursor.y);
});
canvas.addEventListener('pointermove', (event) => {
  if (!painting) return;
  cursor = canvasPoint(event);
  dab(cursor.x, cursor.y);
});
canvas.addEventListener('pointerup', () => {
  painting = false;
});
canvas.addEventListener('keydown', (event) => {
  const step = Math.max(1, Number(brush.value) / 2);
  const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
  const move = moves[/** @type {keyof typeof moves} */ (event.key)];
  if (move) {
    cursor = {
      x: Math.min(canvas.width, Math.max(0, cursor.x + move[0])),
      y: Math.min(canvas.height, Math.max(0, cursor.y + move[1])),
    };
    if (event.shiftKey) dab(cursor.x, cursor.y);
    event.preventDefault();
  } else if (event.key === ' ' || event.key === 'Enter') {
    dab(cursor.x, cursor.y);
    event.preventDefault();
  }
});
el('mask-clear').addEventListener('click', clearMask);

/**
 * Paints a mask as it was sent (white where to repaint) back onto the brush canvas.
 * @param {Blob} mask
 */
export async function restoreMask(mask) {
  const drawn = document.createElement('canvas');
  drawn.width = canvas.width;
  drawn.height = canvas.height;
  const scratch = /** @type {CanvasRenderingContext2D} */ (drawn.getContext('2d'));
  scratch.drawImage(await createImageBitmap(mask), 0, 0, drawn.width, drawn.height);
  const pixels = scratch.getImageData(0, 0, drawn.width, drawn.height);
  // The service repaints where the grey level is at least half (docs/diffusion-service.md, POST /inpaint).
  for (let i = 0; i < pixels.data.length; i += 4) {
    const painted = pixels.data[i] + pixels.data[i + 1] + pixels.data[i + 2] >= 3 * 128;
    pixels.data.set(painted ? [255, 255, 255, 255] : [0, 0, 0, 0], i);
  }
  clearMask();
  ctx.putImageData(pixels, 0, 0);
  dirty = true;
}

/**
 * The mask as the API takes it: white where to repaint, black elsewhere, at the size the picture is sent at.
 * @param {number} width
 * @param {number} height
 * @returns {Promise<Blob>}
 */
export async function maskBlob(width, height) {
  const upload = input('mask-file').files?.[0];
  if (upload && !dirty) return pngAt(await createImageBitmap(upload), width, height, '#000000');
  if (!dirty) throw new Error('paint the area to repaint, or upload a mask');
  return pngAt(canvas, width, height, '#000000');
}
