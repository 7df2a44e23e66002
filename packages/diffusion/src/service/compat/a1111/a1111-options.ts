import { UnprocessableEntity } from '@tiffin/core';
import type { Checkpoint } from '../../checkpoint-catalog.js';
import type { OutputFormat } from '../../output-format.js';
import type { A1111Checkpoints } from './a1111-checkpoints.js';

/** The A1111 settings this service honours (`POST /sdapi/v1/options`), with A1111's defaults. */
export interface HonouredOptions {
  /** The format txt2img/img2img answer their images in (A1111's `samples_format`: png, jpg, webp). */
  samples_format: 'png' | 'jpg' | 'jpeg' | 'webp';
  /** JPEG and WebP quality, 1–100. */
  jpeg_quality: number;
  /** Whether PNGs carry the `parameters` infotext chunk. */
  enable_pnginfo: boolean;
  /** Whether the infotext names the model's hash, and its name. */
  add_model_hash_to_info: boolean;
  add_model_name_to_info: boolean;
}

const DEFAULTS: HonouredOptions = {
  samples_format: 'png',
  jpeg_quality: 80,
  enable_pnginfo: true,
  add_model_hash_to_info: true,
  add_model_name_to_info: true,
};

/** The most settings one `POST /options` may name (A1111 has a few hundred). */
const MAX_KEYS = 1024;

const refuse = (message: string) => new UnprocessableEntity(message);

function checked(key: keyof HonouredOptions, value: unknown): HonouredOptions[keyof HonouredOptions] {
  switch (key) {
    case 'samples_format':
      if (typeof value === 'string' && ['png', 'jpg', 'jpeg', 'webp'].includes(value.toLowerCase()))
        return value.toLowerCase() as HonouredOptions['samples_format'];
      throw refuse('samples_format must be one of png, jpg, webp');
    case 'jpeg_quality':
      if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 100) return value;
      throw refuse('jpeg_quality must be an integer from 1 to 100');
    default:
      if (typeof value === 'boolean') return value;
      throw refuse(`${key} must be true or false`);
  }
}

/**
 * A1111's settings (`/sdapi/v1/options`) as this service keeps them: the few it can honour (`HonouredOptions`),
 * the checkpoint generations use (`sd_model_checkpoint`: one of `--models-dir`'s; an unknown one is a 422), and
 * every other key accepted and reported as ignored. Like A1111's, the settings are the server's, shared by its
 * clients: one client's `sd_model_checkpoint` is every client's (a request's `override_settings` is its own).
 */
export class A1111Options {
  private values: HonouredOptions = { ...DEFAULTS };
  private chosen: Checkpoint;

  /** `checkpoints`: the checkpoints `sd_model_checkpoint` may name by title, name, file name or hash. */
  constructor(private readonly checkpoints: A1111Checkpoints) {
    this.chosen = checkpoints.start;
  }

  /** The checkpoint generations use unless a request's `override_settings` names another. */
  get checkpoint(): Checkpoint {
    return this.chosen;
  }

  get current(): Readonly<HonouredOptions> {
    return this.values;
  }

  /** The answers' image format and quality, as the encoder takes them. */
  get output(): { format: OutputFormat; quality: number } {
    const f = this.values.samples_format;
    return { format: f === 'jpg' ? 'jpeg' : f, quality: this.values.jpeg_quality };
  }

  /** Applies `body`'s honoured keys (all checked first: one bad value changes nothing); returns the ignored keys. */
  async set(body: Record<string, unknown>): Promise<string[]> {
    const keys = Object.keys(body);
    if (keys.length > MAX_KEYS) throw refuse(`at most ${MAX_KEYS} settings at once`);
    const next = { ...this.values };
    let checkpoint = this.chosen;
    const ignored: string[] = [];
    for (const key of keys) {
      const value = body[key];
      if (key === 'sd_model_checkpoint') {
        if (value !== null) checkpoint = await this.checkpoints.find(value);
      } else if (Object.hasOwn(DEFAULTS, key)) {
        (next as Record<string, unknown>)[key] = checked(key as keyof HonouredOptions, value);
      } else ignored.push(key.slice(0, 200));
    }
    this.values = next;
    this.chosen = checkpoint;
    return ignored;
  }
}
