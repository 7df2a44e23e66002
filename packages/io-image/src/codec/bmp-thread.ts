// The task module of the BMP-decoding threads (see bmp-off-thread.ts): started as a worker, never imported.
import { serveTasksInThread, Transferring } from '@tiffin/core/descriptor';
import { decode } from 'bmp-ts';

export interface BmpPixels {
  width: number;
  height: number;
  bitPP: number;
  /** RGBA, 4 bytes a pixel. */
  data: Uint8Array;
}

serveTasksInThread({
  /** bmp-ts's decoder, one file at a time; the RGBA pixels are moved back, not copied. */
  decodeBmp: (bytes: Uint8Array): Transferring<BmpPixels> => {
    const d = decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { toRGBA: true });
    let data = new Uint8Array(d.data.buffer, d.data.byteOffset, d.data.byteLength);
    if (data.byteLength !== data.buffer.byteLength) data = data.slice();
    return new Transferring({ width: d.width, height: d.height, bitPP: d.bitPP, data }, [
      data.buffer as ArrayBuffer,
    ]);
  },
});
