import type { GeneratedImages } from '../../images-output.js';
import { encodeGenerated, outputMediaType } from '../../output-format.js';
import type { ImagesRequest } from './openai-request.js';
import type { ResultStore } from './result-store.js';

/** OpenAI's images response. */
export interface ImagesAnswer {
  created: number;
  data: Array<{ b64_json: string } | { url: string }>;
  output_format: string;
  size: string;
}

/** Generated images as OpenAI answers them: base64 in the body, or URLs this service serves for a while. */
export async function imagesAnswer(
  generated: GeneratedImages,
  request: ImagesRequest,
  store: ResultStore,
  origin: string,
): Promise<ImagesAnswer> {
  const data: ImagesAnswer['data'] = [];
  let size = '';
  for (const image of generated.images) {
    const [height, width] = image.shape;
    size = `${width}x${height}`;
    const bytes = await encodeGenerated(image.data as Uint8Array, width, height, request.outputFormat);
    if (request.responseFormat === 'b64_json') data.push({ b64_json: bytes.toString('base64') });
    else
      data.push({
        url: `${origin}/v1/images/results/${store.put(bytes, outputMediaType(request.outputFormat))}`,
      });
  }
  return { created: Math.floor(Date.now() / 1000), data, output_format: request.outputFormat, size };
}
