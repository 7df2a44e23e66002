import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { descriptorFromSpec } from '@tiffin/core/internal';
import { describe, expect, it } from 'vitest';
import { Image, SUPPORTED_MIME_TYPES, TiffinImage } from '../src/index.js';
import { BMP_10, errorOf, gradientRgb, pngOf } from './helpers.js';

describe('Image construction, spec and OpenAPI', () => {
  it('defaults: RGB, image/jpeg, every supported type allowed', () => {
    const img = new Image();
    expect(img.pilmode).toBe('RGB');
    expect(img.mimeType).toBe('image/jpeg');
    expect(img.allowedMimeTypes).toEqual(SUPPORTED_MIME_TYPES);
    expect(img.displayName).toBe('Image');
    expect(img.protoFields).toEqual(['file']);
  });

  it('mime_type is lower-cased and validated', () => {
    expect(new Image({ mime_type: 'IMAGE/PNG' }).mimeType).toBe('image/png');
    expect(() => new Image({ mime_type: 'image/x-icon' })).toThrow(
      `Invalid Image mime_type 'image/x-icon'; supported mime types are ${SUPPORTED_MIME_TYPES.join(', ')} `,
    );
  });

  it('toSpec / fromSpec round-trip through the registry under tiffin.io.Image', () => {
    const img = new Image({
      pilmode: 'L',
      mime_type: 'image/bmp',
      allowed_mime_types: ['image/png'],
      max_pixels: 1000,
    });
    const spec = img.toSpec();
    expect(spec).toEqual({
      id: 'tiffin.io.Image',
      args: { pilmode: 'L', mime_type: 'image/bmp', allowed_mime_types: ['image/png'], max_pixels: 1000 },
    });
    const back = descriptorFromSpec(JSON.parse(JSON.stringify(spec)));
    expect(back).toBeInstanceOf(Image);
    expect(back.toSpec()).toEqual(spec);
    expect(() => Image.fromSpec({ id: 'tiffin.io.Image' })).toThrow('Missing args key in Image spec');
  });

  it('OpenAPI: binary string schema, request body keyed by each allowed type', () => {
    const img = new Image({ allowed_mime_types: ['image/png', 'image/*'], mime_type: 'image/webp' });
    expect(img.openapiSchema()).toEqual({ type: 'string', format: 'binary' });
    expect(img.openapiExample()).toBeNull();
    expect(img.openapiComponents()).toBeNull();
    const body = img.openapiRequestBody();
    expect(Object.keys(body.content)).toEqual(['image/png', 'image/*']);
    expect(body.content['image/png']).toEqual({ schema: { type: 'string', format: 'binary' } });
    expect(body.required).toBe(true);
    expect(body['x-tiffin-io-descriptor']).toEqual(img.toSpec());
    const res = img.openapiResponses();
    expect(Object.keys(res.content)).toEqual(['image/webp']);
    expect(res.description).toBe('Successful Response');
  });
});

describe('Image gRPC mapping (docs/spec/io-descriptors.md §11.3)', () => {
  const img = new Image({ mime_type: 'image/bmp' });

  it('decodes a File message and serialized bytes', async () => {
    const fromFile = await img.fromProto({ kind: 'image/bmp', content: BMP_10 });
    expect([fromFile.width, fromFile.height]).toEqual([10, 10]);
    const unsetKind = await img.fromProto({ content: BMP_10 });
    expect(unsetKind.width).toBe(10);
    const fromBytes = await img.fromProto(new Uint8Array(BMP_10));
    expect(fromBytes.width).toBe(10);
  });

  it('a set kind different from mime_type, and empty content, are BadInput', async () => {
    expect(await errorOf(img.fromProto({ kind: 'image/png', content: BMP_10 }))).toMatchObject({
      status: 400,
      message: "MIME type from 'kind' is 'image/png', while 'Image' is expecting 'image/bmp'",
    });
    expect(await errorOf(img.fromProto({ kind: 'image/bmp', content: Buffer.alloc(0) }))).toMatchObject({
      status: 400,
      message: 'Content is empty!',
    });
  });

  it('toProto encodes into a File message of kind mime_type', async () => {
    const image = new TiffinImage({ width: 10, height: 10, mode: 'RGB', data: gradientRgb(10, 10) });
    const msg = await img.toProto(image);
    expect(msg.kind).toBe('image/bmp');
    expect(Buffer.from(msg.content!).subarray(0, 2).toString('latin1')).toBe('BM');
    expect((await errorOf(img.toProto(42 as never))).message).toContain('Unsupported Image type received');
  });
});

describe('Image.fromSample', () => {
  it('takes a path or bytes; the MIME type is sniffed from the content and used for output', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'io-image-'));
    const path = join(dir, 'sample.data');
    await writeFile(path, await pngOf(gradientRgb(4, 3), 4, 3));
    const fromPath = await Image.fromSample(path);
    expect(fromPath.mimeType).toBe('image/png');
    expect(fromPath.outputFileName).toBe('output.png');
    expect((fromPath.sample as TiffinImage).width).toBe(4);
    const fromBytes = await Image.fromSample(BMP_10, { pilmode: 'L' });
    expect(fromBytes.mimeType).toBe('image/bmp');
    expect((fromBytes.sample as TiffinImage).mode).toBe('L');
  });

  it('errors: not an image → InvalidArgument, undecodable → BadInput, missing file, wrong type', async () => {
    expect(await errorOf(Image.fromSample(Buffer.from('plain text')))).toMatchObject({
      type: 'InvalidArgument',
      message: 'The given 10 bytes is not a valid image file type.',
    });
    const png = await pngOf(gradientRgb(64, 64), 64, 64);
    const broken = await errorOf(Image.fromSample(png.subarray(0, 60)));
    expect(broken.type).toBe('BadInput');
    expect(broken.message.startsWith('Failed to parse sample image file: ')).toBe(true);
    expect((await errorOf(Image.fromSample('/nonexistent/x.png'))).type).toBe('InvalidArgument');
    expect((await errorOf(Image.fromSample(42 as never))).message).toContain(
      'expects a file path or the image bytes',
    );
  });

  it('a missing file-type package is a MissingDependencyException naming it', async () => {
    const missing = () => Promise.reject(new Error("Cannot find package 'file-type'"));
    const err = await errorOf(Image.fromSample(BMP_10, {}, missing));
    expect(err.type).toBe('MissingDependencyException');
    expect(err.message).toContain("requires the package 'file-type'");
  });
});
