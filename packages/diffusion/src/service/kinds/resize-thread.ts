// The task module of the upload-resizing threads (see `resizeOffThread` in images.ts): started as a worker, never
// imported.
import { serveTasksInThread, Transferring } from '@tiffin/core/descriptor';
import { type DecodeAnswer, decodeUploadHere, UnreadableImage } from '../compat/decode-upload.js';
import { cannyEdges } from '../controlnet/canny.js';
import { type Rgb8Image, resizeLanczos } from '../lanczos-resize.js';

serveTasksInThread({
  /**
   * An upload decoded here (`decodeUploadHere`), its pixels copied out of sharp's buffer (external memory, which
   * cannot be moved) into one of their own, here rather than on the event loop, and moved back.
   */
  decodeUpload: async (
    bytes: Uint8Array,
    maxPixels: number,
    keepAlpha: boolean,
  ): Promise<DecodeAnswer | Transferring<DecodeAnswer>> => {
    try {
      const image = await decodeUploadHere(bytes, maxPixels, keepAlpha);
      const data = new Uint8Array(image.data.byteLength);
      data.set(image.data);
      return new Transferring({ image: { ...image, data } }, [data.buffer]);
    } catch (err) {
      if (err instanceof UnreadableImage) return { unreadable: err.message, tooLarge: err.tooLarge };
      throw err;
    }
  },
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
