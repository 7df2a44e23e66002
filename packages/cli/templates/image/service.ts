import { JSONDescriptor, NDArray, Service } from '@tiffin/core';
import { Image, type TiffinImage } from '@tiffin/io-image';

/** The APIs are chained so that `typeof svc` lists them for the typed client (see client.ts). */
const svc = new Service('image', { doc: 'Facts about an image, and its negative.' })
  .api(
    {
      name: 'describe',
      input: new Image({ pilmode: 'RGB' }),
      output: new JSONDescriptor(),
      doc: 'Width, height and mean colour of a PNG, JPEG, WebP, GIF, TIFF or BMP image.',
    },
    (img: TiffinImage) => {
      const px = img.pixels.data as Uint8Array; // H×W×3, RGB
      const mean = [0, 0, 0];
      for (let i = 0; i < px.length; i++) mean[i % 3]! += px[i]!;
      const count = px.length / 3;
      return { width: img.width, height: img.height, mean_rgb: mean.map((sum) => Math.round(sum / count)) };
    },
  )
  .api(
    {
      name: 'invert',
      input: new Image({ pilmode: 'L' }),
      output: new Image({ pilmode: 'L', mime_type: 'image/png' }),
      doc: 'The greyscale negative, as PNG.',
    },
    (img: TiffinImage) => {
      const px = img.pixels; // H×W, uint8
      const negative = (px.data as Uint8Array).map((v) => 255 - v);
      return new NDArray(negative, px.shape); // pixels out: encoded as the output's PNG
    },
  );

export default svc;
