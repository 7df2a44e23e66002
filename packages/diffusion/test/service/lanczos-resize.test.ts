import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { resizeLanczos } from '../../src/service/lanczos-resize.js';

/** A deterministic RGB test card with detail in every channel. */
function card(width: number, height: number) {
  const data = new Uint8Array(width * height * 3);
  let i = 0;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      for (let c = 0; c < 3; c++) data[i++] = (x * 37 + y * 91 + c * 53 + ((x * y * 7) % 29)) % 256;
  return { width, height, data };
}

/**
 * Recorded with Pillow 9.4.0 (Debian python3-pil), the resampler diffusers' VaeImageProcessor uses:
 *   Image.frombytes('RGB', (w, h), card).resize((ow, oh), Image.LANCZOS).tobytes()
 */
const PILLOW = {
  shrink13x11to8x8:
    '165fa57598968094b893885847398750a17d9086807cb224b0a6848775654e508e4597a7b1cd60a28639565075457ccc4b6e716d77bf8fbd90d551567a78756b71b686b4b4be7e57a9bf6bb43a436859a752a3b39b9692805f3e8d36823890bc797f8068' +
    '98ae9c775da0537d4d545e427ec07a9a61cc478a7ca38fb8574a87487f6189978fbb4da577363f3e804b7a82663a7e479ebea496906d9a42835b6e3874be8cad9dc3755185cdb2ba8266504c5d3858c06ec870cdac6b655561805da0',
  grow7x9to16x8:
    '023178043b82125294286fa34288a45992a06f92a68292b78596dc83a2eb84c1dc90e87da4db28ba8327c82b4ecf046b77b59784afad9b9dcdad9dc8a0c07e93cc2ead9115c63434a20a5e48227c0449950458a61a68a93886a0479e9652a99175c7188fa528b25c49b51e77732a9d2462b40280c9188ed247aac37ccda6a2cda0aca5bab382b6c68870dca325e5b300133ccf1c60bb32a2975ccf7888ab73af6b8ad15aa8db68b3c48f9492ac57749d2a7b5e2898204faa1b83af33a8b244bbb3ef88caeb6dedbb44f2731cb3321d71143e70185f8e2a7f8a4c9f526abf2584dd219df740b7f168cfb384de7593e5574d89495c7e5d735c827f4dbd6c6ff24ea9f343d5b555e15e7ab63ea96c4bd53a71f5367fe143799a60615a73483c7e3d5287fa5ea7d279da859ee73eba983fcf395fef2c58fc383bcf493b793f55433b734a45816352915c66ae4472c73c78d2f01b52c32b577748612c616f21647d455b8c61629d6c72b47089d86fa4f96fb8dd77c6818fd629aae81cbff539c9fb4f',
  sha256Of37x29to32x24: '82342106685b34943ffb32a53e57e8e3d3df9325d57f01cb904a5a104758b96f',
};

const hex = (data: Uint8Array) => Buffer.from(data).toString('hex');

describe('resizeLanczos', () => {
  it('matches Pillow LANCZOS byte for byte when shrinking both sides', () => {
    const out = resizeLanczos(card(13, 11), 8, 8);
    expect([out.width, out.height]).toEqual([8, 8]);
    expect(hex(out.data)).toBe(PILLOW.shrink13x11to8x8);
  });

  it('matches Pillow when one side grows and the other shrinks', () => {
    expect(hex(resizeLanczos(card(7, 9), 16, 8).data)).toBe(PILLOW.grow7x9to16x8);
  });

  it('matches Pillow for an img2img-style round-down to multiples of 8 (37×29 → 32×24)', () => {
    const out = resizeLanczos(card(37, 29), 32, 24);
    expect(createHash('sha256').update(out.data).digest('hex')).toBe(PILLOW.sha256Of37x29to32x24);
  });

  it('keeps an image of the target size unchanged (as a copy) and a flat colour flat', () => {
    const src = card(16, 8);
    const same = resizeLanczos(src, 16, 8);
    expect(same.data).toEqual(src.data);
    expect(same.data).not.toBe(src.data);
    const flat = { width: 19, height: 13, data: new Uint8Array(19 * 13 * 3).fill(200) };
    expect(resizeLanczos(flat, 16, 8).data.every((v) => v === 200)).toBe(true);
  });

  it('refuses an empty target', () => {
    expect(() => resizeLanczos(card(8, 8), 0, 8)).toThrow(/cannot resize to 0×8/);
  });
});
