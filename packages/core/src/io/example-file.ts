/**
 * A file that stands for a binary input's example (an image): no JSON value can carry its bytes, so the
 * server serves it at `/docs/examples/<api>[/<part>]`, `/docs.json` links it, and the API page pre-fills it.
 */
export interface ExampleFile {
  /** The media type it is sent as (one the input accepts). */
  mediaType: string;
  /** The name a browser gives the file when it is sent as a form part. */
  fileName: string;
  /** Its bytes, made on first use. */
  bytes(): Promise<Uint8Array>;
}

/** Example files of an input: `''` for the whole body, a part's name for a multipart part. */
export type ExampleFiles = Readonly<Record<string, ExampleFile>>;

/** Where the server serves an API's example file (relative to the API page, as `./docs.json` is). */
export function exampleFilePath(api: string, part: string): string {
  const encode = (s: string) => encodeURIComponent(s);
  return `docs/examples/${encode(api)}${part === '' ? '' : `/${encode(part)}`}`;
}
