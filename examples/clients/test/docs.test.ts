import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as grpcJs from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  type GrpcServerHandle,
  inferenceV2ProtoPath,
  type ServerHandle,
  serve,
  serveGrpc,
  silentLogger,
} from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import svc from '../service.js';

const run = promisify(execFile);
const HERE = dirname(fileURLToPath(import.meta.url));
const DOC = join(HERE, '..', '..', '..', 'docs', 'clients.md');
const FIXTURES = join(HERE, '..', 'fixtures');

/** The fenced blocks of a language in the page, in order. */
function blocks(markdown: string, lang: string): string[] {
  const out: string[] = [];
  // The info string may go on after the language (`run-by=…`, read by the repository's docs checker).
  const fence = new RegExp(`^\`\`\`${lang}(?:[ \\t][^\\n]*)?\\n([\\s\\S]*?)^\`\`\`$`, 'gm');
  for (const m of markdown.matchAll(fence)) out.push(m[1]!);
  return out;
}

async function has(command: string, args: string[]): Promise<boolean> {
  try {
    await run(command, args);
    return true;
  } catch {
    return false;
  }
}

const doc = await readFile(DOC, 'utf8');
const shell = blocks(doc, 'sh');
const curl = shell.filter((b) => b.trimStart().startsWith('curl'));
const grpcurl = shell.filter((b) => b.trimStart().startsWith('grpcurl'));
const python = blocks(doc, 'python');
const haveCurl = await has('curl', ['--version']);
const havePython = await has('python3', ['-c', 'import requests']);
const haveGrpcurl = await has('grpcurl', ['-version']);
// Visible in the test output when a tool is missing (the examples are then not run).
if (!haveCurl) console.warn('docs/clients.md: curl not found: the curl examples were not run');
if (!havePython)
  console.warn('docs/clients.md: python3 with requests not found: the Python examples were not run');
if (!haveGrpcurl) {
  console.warn(
    'docs/clients.md: grpcurl not found: the grpcurl examples were not run (the Open Inference Protocol request is still sent, with @grpc/grpc-js)',
  );
}

let http: ServerHandle;
let grpc: GrpcServerHandle;
let work: string;
beforeAll(async () => {
  http = await serve(svc, { port: 0, host: '127.0.0.1', handleSignals: false, logger: silentLogger });
  grpc = await serveGrpc(svc, { port: 0, host: '127.0.0.1' });
  work = await mkdtemp(join(tmpdir(), 'tiffin-docs-'));
  await cp(FIXTURES, work, { recursive: true });
});
afterAll(async () => {
  await http?.close();
  await grpc?.close();
  await rm(work, { recursive: true, force: true });
});

/** Where a user's project has @tiffin/core's .proto files, as the page spells it. */
const PROTO_DIR = 'node_modules/@tiffin/core/proto';

/** The page's addresses → this test's servers; the .proto folder → this checkout's. */
const localize = (code: string) =>
  code
    .replaceAll('http://127.0.0.1:3000', http.url)
    .replaceAll('127.0.0.1:3001', `127.0.0.1:${grpc.port}`)
    .replaceAll(PROTO_DIR, dirname(dirname(inferenceV2ProtoPath())));

const v2Grpc = grpcurl.filter((b) => b.includes('inference.GRPCInferenceService/'));

/** The `-d '...'` request and the `Service/Method` of a grpcurl block. */
function grpcurlCall(code: string): { request: unknown; method: string } {
  const body = /-d '([^']*)'/.exec(code)?.[1];
  const method = /inference\.GRPCInferenceService\/(\w+)/.exec(code)?.[1];
  if (!body || !method) throw new Error(`not a grpcurl call: ${code}`);
  return { request: JSON.parse(body), method };
}

describe('docs/clients.md examples run against the example service', () => {
  it('has curl and Python examples for every descriptor, and a grpcurl example', () => {
    for (const api of [
      'scale',
      'keys',
      'shout',
      'checksum',
      'grayscale',
      'totals',
      'totals_csv',
      'series_sum',
      'describe',
      'words',
    ]) {
      expect(
        curl.some((b) => b.includes(`/${api} `) || b.includes(`/${api}\n`) || b.includes(`/${api} \\`)),
        `curl ${api}`,
      ).toBe(true);
      expect(
        python.some((b) => b.includes(`/${api}"`)),
        `python ${api}`,
      ).toBe(true);
    }
    expect(curl.some((b) => b.includes('application/vnd.apache.parquet'))).toBe(true);
    expect(curl.some((b) => b.includes('text/csv'))).toBe(true);
    expect(grpcurl).toHaveLength(2);
    expect(v2Grpc).toHaveLength(1);
  });

  it.runIf(haveCurl).each(curl.map((b, i) => [i, b]))('curl example %i', async (_i, code) => {
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', localize(code as string)], { cwd: work });
    // A block that saves the answer to a file (-o) prints nothing; the others print the answer.
    if (!(code as string).includes(' -o ')) expect(stdout.trim()).not.toBe('');
  });

  it.runIf(havePython).each(python.map((b, i) => [i, b]))('python example %i', async (_i, code) => {
    const { stdout } = await run('python3', ['-c', localize(code as string)], { cwd: work });
    expect(stdout.trim()).not.toBe('');
  });

  it.runIf(haveGrpcurl)('grpcurl examples', async () => {
    const [native, v2] = [grpcurl.find((b) => !v2Grpc.includes(b))!, v2Grpc[0]!];
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', localize(native)], { cwd: work });
    expect(stdout).toContain('NAMASTE');
    const answer = await run('bash', ['-euo', 'pipefail', '-c', localize(v2)], { cwd: work });
    expect(answer.stdout).toContain('"modelName": "scale"');
  });

  // Without grpcurl, the same request goes through a client built from the same shipped .proto.
  it('the Open Inference Protocol grpcurl request is answered (sent with @grpc/grpc-js)', async () => {
    const { request, method } = grpcurlCall(v2Grpc[0]!);
    const definition = protoLoader.loadSync(inferenceV2ProtoPath(), { keepCase: true, longs: String });
    const pkg = grpcJs.loadPackageDefinition(definition) as unknown as {
      inference: { GRPCInferenceService: grpcJs.ServiceClientConstructor };
    };
    const client = new pkg.inference.GRPCInferenceService(
      `127.0.0.1:${grpc.port}`,
      grpcJs.credentials.createInsecure(),
    ) as grpcJs.Client &
      Record<string, (req: unknown, cb: (err: Error | null, res: unknown) => void) => void>;
    try {
      const res = await new Promise((resolve, reject) =>
        client[method]!.call(client, request, (err: Error | null, r: unknown) =>
          err ? reject(err) : resolve(r),
        ),
      );
      expect(res).toMatchObject({
        model_name: 'scale',
        outputs: [
          { name: 'output', datatype: 'FP64', shape: ['2', '2'], contents: { fp64_contents: [2, 4, 6, 8] } },
        ],
      });
    } finally {
      client.close();
    }
  });
});
