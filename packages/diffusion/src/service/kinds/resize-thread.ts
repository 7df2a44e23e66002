// The task module of the upload-resizing threads (see `resizeOffThread` in images.ts): started as a worker, never
// imported.
import { serveTasksInThread, Transferring } from '@tiffin/core/descriptor';
import { cannyEdges } from '../controlnet/canny.js';
import { type Rgb8Image, resizeLanczos } from '../lanczos-resize.js';

serveTasksInThread({
  /** Pillow's Lanczos resize (`resizeLanczos`), byte for byte; the resized pixels are moved back, not copied. */
  resizeLanczos: (image: Rgb8Image, width: number, height: number): Transferring<Rgb8Image> => {
    const out = resizeLanczos(image, width, height);
    return new Transferring(out, [out.data.buffer as ArrayBuffer]);
  },
  /** A ControlNet unit's Canny map (`cannyEdges`, OpenCV's), moved back. */
  cannyEdges: (image: Rgb8Image, low: number, high: number): Transferring<Rgb8Image> => {
    const out = cannyEdges(image, low, high);
    return new Transferring(out, [out.data.buffer as ArrayBuffer]);
  },
});
