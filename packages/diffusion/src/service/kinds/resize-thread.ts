// The task module of the upload-resizing threads (see `resizeOffThread` in images.ts): started as a worker, never
// imported.
import { serveTasksInThread, Transferring } from '@tiffin/core/descriptor';
import { type Rgb8Image, resizeLanczos } from '../lanczos-resize.js';

serveTasksInThread({
  /** Pillow's Lanczos resize (`resizeLanczos`), byte for byte; the resized pixels are moved back, not copied. */
  resizeLanczos: (image: Rgb8Image, width: number, height: number): Transferring<Rgb8Image> => {
    const out = resizeLanczos(image, width, height);
    return new Transferring(out, [out.data.buffer as ArrayBuffer]);
  },
});
