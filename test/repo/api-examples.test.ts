import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort, readerEnv, ServerProcess } from './server-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LAUNCHER = join(ROOT, 'packages/cli/bin/tiffin.js');

interface MediaType {
  example?: unknown;
  /** An example file (an image) the server serves: `externalValue` links it, relative to the API page. */
  examples?: { example?: { externalValue?: string } };
  /** A form's parts given as example files: part name → link. */
  'x-tiffin-example-files'?: Record<string, string>;
}
interface Operation {
  'x-tiffin-name'?: string;
  /** On a task API's routes (`/<api>/submit`, ...) instead of the name. */
  'x-tiffin-task'?: { api: string; operation: string };
  requestBody?: { content: Record<string, MediaType> };
}
interface Document {
  paths: Record<string, Partial<Record<'get' | 'post', Operation>>>;
}

/** A part or body value as sent: text as it is, any other JSON value as JSON text. */
const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** An example file as the API page fetches it (its link resolved against the page). */
async function exampleFile(url: string, link: string): Promise<Blob> {
  const res = await fetch(new URL(link, `${url}/`));
  expect(res.status, link).toBe(200);
  return res.blob();
}

/**
 * The request "Try it out" sends with the pre-filled example, built from `/docs.json` alone: the first media
 * type of the request body and its example (JSON as JSON, a text or file body as its text, an example file as
 * its bytes, Multipart as form fields and example files). Null when the API has no example there.
 */
async function exampleRequest(url: string, operation: Operation): Promise<RequestInit | null> {
  const [mediaType, media] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];
  if (!mediaType || !media) return null;
  const link = media.examples?.example?.externalValue;
  if (link) {
    return { method: 'POST', body: await exampleFile(url, link), headers: { 'content-type': mediaType } };
  }
  if (media.example === undefined || media.example === null) return null;
  const example = media.example;
  if (mediaType === 'multipart/form-data') {
    const form = new FormData();
    for (const [name, value] of Object.entries(example as Record<string, unknown>))
      form.append(name, asText(value));
    for (const [name, part] of Object.entries(media['x-tiffin-example-files'] ?? {}))
      form.append(name, await exampleFile(url, part), 'example');
    return { method: 'POST', body: form };
  }
  const body = /json/.test(mediaType) ? JSON.stringify(example) : asText(example);
  return {
    method: 'POST',
    body,
    headers: { 'content-type': mediaType === '*/*' ? 'text/plain' : mediaType },
  };
}

/** Serves `args` (a `tiffin` command line) and posts every API's own example; the status of each. */
async function examplesOf(args: string[]): Promise<{ missing: string[]; statuses: Record<string, number> }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = new ServerProcess(process.execPath, [LAUNCHER, ...args, '--port', String(port)], {
    cwd: ROOT,
    env: readerEnv({ TIFFIN_LOG_LEVEL: 'warn' }),
  });
  try {
    await server.ready(`${url}/readyz`, 120_000);
    const doc = (await (await fetch(`${url}/docs.json`)).json()) as Document;
    const missing: string[] = [];
    const statuses: Record<string, number> = {};
    for (const [path, operations] of Object.entries(doc.paths)) {
      const post = operations.post;
      if (!post) continue; // infrastructure routes, and APIs read from the query string (GET only)
      const task = post['x-tiffin-task'];
      const name = post['x-tiffin-name'] ?? `${task?.api}/${task?.operation}`;
      const request = await exampleRequest(url, post);
      if (!request) {
        missing.push(name);
        continue;
      }
      const res = await fetch(url + path, request);
      // An event stream may go on (diffusion's /progress follows every job): the status is the answer.
      if (res.headers.get('content-type')?.startsWith('text/event-stream')) await res.body?.cancel();
      else await res.arrayBuffer();
      statuses[name] = res.status;
    }
    return { missing, statuses };
  } finally {
    server.child.kill('SIGTERM');
    if (!(await server.exitsWithin(20_000))) server.kill();
  }
}

const ok = (statuses: Record<string, number>) =>
  Object.fromEntries(Object.entries(statuses).filter(([, status]) => status < 200 || status > 299));

describe("every API's own example in /docs.json is accepted (what the API page pre-fills)", () => {
  it.each([
    ['the quickstart', ['serve', 'examples/quickstart/service.ts'], []],
    // Image inputs (grayscale, describe's photo) are example images the server serves.
    ['the clients example', ['serve', 'examples/clients/service.ts'], []],
    // <kind>/cancel (a task route) reads the task id from the query string (`?id=`): no body, no example.
    [
      'the diffusion service (demo model)',
      ['diffusion', 'start', 'demo'],
      ['text2img/cancel', 'img2img/cancel', 'inpaint/cancel'],
    ],
  ] as const)(
    '%s',
    async (_name, args, withoutExample) => {
      const { missing, statuses } = await examplesOf([...args]);
      expect(missing).toEqual(withoutExample);
      expect(Object.keys(statuses).length).toBeGreaterThan(0);
      expect(ok(statuses), JSON.stringify(statuses)).toEqual({});
    },
    240_000,
  );
});
