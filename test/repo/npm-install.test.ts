import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAndPackAll, checkTarball, publishedPackages, run } from './packages.js';
import { readerCompilerOptions } from './reader-compiler-options.js';
import { answers, freePort, readerEnv, ServerProcess } from './server-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGES = publishedPackages(ROOT);
// Outside the workspace, so nothing resolves through it: only what npm installed from the tarballs.
const WORK = mkdtempSync(join(tmpdir(), 'tiffin-npm-'));
const PROJECT = join(WORK, 'app');
const tarballs = new Map<string, string>();

afterAll(async () => {
  await rm(WORK, { recursive: true, force: true });
}, 180_000);

beforeAll(async () => {
  // `pnpm test` has just built everything (turbo then answers from its cache); alone, this builds.
  for (const [name, tarball] of await buildAndPackAll(ROOT, WORK)) tarballs.set(name, tarball);
}, 900_000);

/** A plain-JS service: a JSON API whose input is a zod model (@tiffin/io-json). */
const JS_SERVICE = `import { JSONDescriptor, Service } from '@tiffin/core';
import { jsonModel } from '@tiffin/io-json';
import { z } from 'zod';

const Order = z.object({ item: z.string().min(1), quantity: z.number().int().positive() });
const svc = new Service('orders');
svc.api({ input: jsonModel(Order), output: new JSONDescriptor() }, function total(order) {
  return { item: order.item, total: order.quantity * 3 };
});
export default svc;
`;

/** A TypeScript service: rows of 4 numbers in, their sums out (shape enforced by the descriptor). */
const TS_SERVICE = `import { NDArray, NumpyNdarray, Service } from '@tiffin/core';

const svc = new Service('sums');
svc.api(
  { input: new NumpyNdarray({ dtype: 'float64', shape: [-1, 4], enforce_shape: true }), output: new NumpyNdarray() },
  function sum(input: NDArray): NDArray {
    const data = input.data as Float64Array;
    const sums: number[] = [];
    for (let i = 0; i < input.shape[0]; i++) sums.push(data.subarray(i * 4, i * 4 + 4).reduce((a, b) => a + b, 0));
    return NDArray.from(sums, 'float64');
  },
);
export default svc;
`;

/** Starts the gRPC server (both services) from the installed package and prints where its .proto files are. */
const GRPC_PROTOS = `import { inferenceV2ProtoPath, protoPath, Service, serveGrpc, Text } from '@tiffin/core';

const svc = new Service('protos').api({ name: 'echo', input: new Text(), output: new Text() }, (t) => t);
const rpc = await serveGrpc(svc, { port: 0, log: () => {} });
await rpc.close();
console.log(JSON.stringify({ v2: inferenceV2ProtoPath(), native: protoPath(), served: true }));
`;

/**
 * A service with its own routes beside its API (docs/server.md "Your own routes"): a @koa/router GET with a path
 * parameter and a POST form parsed by koa-body, behind the API token, and a public router.
 */
const MOUNTED_SERVICE = `import Router from '@koa/router';
import { koaBody } from 'koa-body';
import { Service, Text } from '@tiffin/core';

const svc = new Service('site');
svc.api({ input: new Text(), output: new Text() }, function shout(text) {
  return text.toUpperCase();
});

const site = new Router();
site.get('/hello/:name', (ctx) => {
  ctx.body = { hello: ctx.params.name };
});
site.post('/signup', koaBody(), (ctx) => {
  ctx.status = 201;
  ctx.body = { welcome: ctx.request.body.email };
});
svc.mount(site.routes()).mount(site.allowedMethods());

const hooks = new Router();
hooks.get('/ping', (ctx) => {
  ctx.body = 'pong';
});
svc.mount(hooks.routes(), { public: true });
export default svc;
`;

/** Checks a served MOUNTED_SERVICE with TIFFIN_API_TOKEN=t0ken: its routes, the token, and the server's own routes. */
async function checkMountedService(url: string): Promise<void> {
  const auth = { authorization: 'Bearer t0ken' };
  expect((await fetch(`${url}/hello/ada`)).status).toBe(401);
  const hello = await fetch(`${url}/hello/ada`, { headers: auth });
  expect([hello.status, await hello.json()]).toEqual([200, { hello: 'ada' }]);
  const signup = await fetch(`${url}/signup`, {
    method: 'POST',
    headers: auth,
    body: new URLSearchParams({ email: 'zoë@example.com' }),
  });
  expect([signup.status, await signup.json()]).toEqual([201, { welcome: 'zoë@example.com' }]);
  const ping = await fetch(`${url}/ping`);
  expect([ping.status, await ping.text()]).toEqual([200, 'pong']);
  expect((await fetch(`${url}/shout`, { method: 'POST', body: 'hi' })).status).toBe(401);
  const shout = await fetch(`${url}/shout`, { method: 'POST', body: 'hi', headers: auth });
  expect(await shout.text()).toBe('HI');
  expect((await fetch(`${url}/livez`)).status).toBe(200);
  const metrics = await (await fetch(`${url}/metrics`)).text();
  expect(metrics).toMatch(/tiffin_api_server_request_total\{endpoint="\/hello\/:name"/);
  expect((await fetch(`${url}/`, { headers: auth })).status).toBe(200);
  const docs = (await (await fetch(`${url}/docs.json`, { headers: auth })).json()) as { paths: object };
  expect(Object.keys(docs.paths)).toEqual(
    expect.arrayContaining(['/shout', '/hello/{name}', '/signup', '/ping']),
  );
}

/** `npm install` into a project as a user runs it (no lifecycle scripts: nothing downloads from elsewhere). */
async function npmInstall(packages: string[], project = PROJECT): Promise<void> {
  await run(
    'npm',
    ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', ...packages],
    {
      cwd: project,
      env: readerEnv({}),
      timeout: 600_000,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
}

/** Writes an ONNX model with the installed @tiffin/onnx's graph writer: y = 2x, rows of 3, batch dimension free. */
const WRITE_MODEL = `import { writeFileSync } from 'node:fs';
import { DataType, encodeModel } from '@tiffin/onnx';

const two = { name: 'two', dataType: DataType.FLOAT, dims: [1], data: { kind: 'raw', bytes: new Uint8Array(Float32Array.of(2).buffer) } };
const io = (name) => ({ name, elemType: DataType.FLOAT, shape: ['batch', 3] });
const graph = { name: 'double', nodes: [{ opType: 'Mul', inputs: ['x', 'two'], outputs: ['y'] }], initializers: [two], inputs: [io('x')], outputs: [io('y')] };
writeFileSync('double.onnx', encodeModel({ opsets: { '': 17 }, graph }));
`;

/** Writes a TensorFlow.js LayersModel folder with the installed packages and prints what tfjs predicts for it. */
const TFJS_MODEL = `import * as tf from '@tensorflow/tfjs';
import { writeModelFolder } from '@tiffin/tfjs';

const model = tf.sequential({
  layers: [tf.layers.dense({ units: 3, inputShape: [4], activation: 'softmax', name: 'scores' })],
});
model.setWeights(model.getWeights().map((w, i) => tf.fill(w.shape, i === 0 ? 0.1 : -0.2)));
await writeModelFolder(model, 'mlp');
const x = [[1, 2, 3, 4], [0, 1, 0, 1]];
console.log(JSON.stringify({ x, y: await model.predict(tf.tensor(x)).array() }));
`;

/**
 * An ONNX user's script: loads @tiffin/diffusion (noting what of @tensorflow that loaded), generates with the bundled
 * demo model on onnxruntime, then asks for the TF.js engine in code (wasm) and prints the error it gets.
 */
const ONNX_GENERATE = `import { createRequire } from 'node:module';

const diffusion = await import('@tiffin/diffusion');
const tfOnImport = Object.keys(createRequire(import.meta.url).cache).filter((p) => p.includes('@tensorflow'));
const { demoModelDir } = await import('@tiffin/demo-model');
const { StableDiffusionPipeline } = diffusion;
const pipe = await StableDiffusionPipeline.fromPretrained(demoModelDir(), { backend: 'onnxruntime', log: () => {} });
const { images } = await pipe.text2img({ prompt: 'a large red circle in the centre on a black background', num_inference_steps: 4, seed: 1 });
pipe.dispose();
let tfjsEngine = null;
try {
  await StableDiffusionPipeline.fromPretrained(demoModelDir(), { backend: 'wasm', log: () => {} });
} catch (e) {
  tfjsEngine = { code: e.toBody().code, message: e.message };
}
const tfLoaded = Object.keys(createRequire(import.meta.url).cache).filter((p) => p.includes('@tensorflow'));
const [image] = images;
console.log(JSON.stringify({ tfOnImport, tfLoaded, image: [image.width, image.height, image.data.length], tfjsEngine }));
`;

/** An ONNX user's TypeScript: the pipeline's types as the root's declarations give them, with no TF.js installed. */
const ONNX_USER_TS = `import { type GeneratedImage, StableDiffusionPipeline } from '@tiffin/diffusion';
import { demoModelDir } from '@tiffin/demo-model';

export async function firstImage(prompt: string): Promise<GeneratedImage> {
  const pipe = await StableDiffusionPipeline.fromPretrained(demoModelDir(), { backend: 'onnxruntime' });
  const { images } = await pipe.text2img({ prompt, num_inference_steps: 2, seed: 1 });
  pipe.dispose();
  return images[0]!;
}
`;

/** The @tiffin packages `names` need, themselves included (read from the packed manifests, as npm would). */
function withTiffinDependencies(names: string[]): string[] {
  const all = new Set<string>();
  const visit = (name: string) => {
    if (all.has(name)) return;
    all.add(name);
    const manifest = JSON.parse(
      execFileSync('tar', ['-xOzf', tarballs.get(name)!, 'package/package.json'], { encoding: 'utf8' }),
    ) as { dependencies?: Record<string, string> };
    for (const dep of Object.keys(manifest.dependencies ?? {})) if (dep.startsWith('@tiffin/')) visit(dep);
  };
  for (const name of names) visit(name);
  return [...all].sort();
}

/** The JPEG helper of the diffusion service tests (outside this tsc root, so imported by URL). */
const { jpegSize } = (await import(
  new URL('../../packages/diffusion/test/service/service-helpers.ts', import.meta.url).href
)) as { jpegSize: (bytes: Uint8Array) => { width: number; height: number } };

async function post(url: string, body: string): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, json: await res.json() };
}

async function serve(
  file: string,
  check: (url: string) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // The installed binary itself, as `npx tiffin` would find it.
  const server = new ServerProcess(join(PROJECT, 'node_modules/.bin/tiffin'), ['serve', file], {
    cwd: PROJECT,
    env: readerEnv({ PORT: String(port), ...env }),
  });
  try {
    await server.ready(`${url}/readyz`, 90_000);
    await check(url);
    server.child.kill('SIGTERM');
    expect(await server.exitsWithin(20_000)).toBe(true);
    expect(await answers(`${url}/livez`)).toBe(false);
  } finally {
    server.kill();
  }
}

/** TypeScript's messages for `file` compiled as a reader's project compiles it (none: it type-checks). */
function typeErrors(file: string): string[] {
  const program = ts.createProgram([file], readerCompilerOptions());
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

/** Runs the installed `tiffin` in `project` to its end; its exit code and output. */
async function tiffinExits(project: string, args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(join(project, 'node_modules/.bin/tiffin'), args, {
      cwd: project,
      env: readerEnv(env),
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('the packages as npm users get them', () => {
  it('pack with real versions for workspace:* and no source-only export conditions', () => {
    expect([...tarballs.keys()].sort()).toEqual(PACKAGES.map((p) => p.name).sort());
    for (const tarball of tarballs.values()) {
      const manifest = execFileSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8' });
      expect(manifest).not.toContain('workspace:');
      expect(manifest).not.toContain('./src/');
    }
  });

  it.each(PACKAGES.map((p) => p.name))(
    '%s passes publint (strict) and arethetypeswrong',
    async (name) => {
      const result = await checkTarball(ROOT, tarballs.get(name)!);
      expect(result.ok, result.output).toBe(true);
    },
    300_000,
  );

  it('install with npm into a project outside the workspace and serve a JS and a TS service, and an ONNX model with zero code', async () => {
    mkdirSync(PROJECT);
    // danfojs-node (under @tiffin/io-pandas) needs the overrides its README gives for npm.
    writeFileSync(
      join(PROJECT, 'package.json'),
      JSON.stringify({
        name: 'npm-user',
        private: true,
        type: 'module',
        overrides: {
          xlsx: '0.18.5',
          'danfojs-node': { '@tensorflow/tfjs-node': 'npm:@tensorflow/tfjs@4.22.0' },
        },
      }),
    );
    // TF.js is an optional peer of @tiffin/diffusion and @tiffin/cli: the TF.js model case below installs it itself.
    await npmInstall(['zod@4.6.7', '@tensorflow/tfjs@4.22.0', ...tarballs.values()]);
    writeFileSync(join(PROJECT, 'orders.mjs'), JS_SERVICE);
    writeFileSync(join(PROJECT, 'sums.ts'), TS_SERVICE);

    // The TypeScript service type-checks against the installed declarations (no workspace, no source condition).
    expect(typeErrors(join(PROJECT, 'sums.ts'))).toEqual([]);

    await serve('orders.mjs', async (url) => {
      expect(await post(`${url}/total`, '{"item": "tea", "quantity": 2}')).toEqual({
        status: 200,
        json: { item: 'tea', total: 6 },
      });
      const bad = await post(`${url}/total`, '{"item": "", "quantity": -1}');
      expect(bad.status).toBe(400);
      expect(bad.json).toMatchObject({ type: 'BadInput' });
    });
    await serve('sums.ts', async (url) => {
      expect(await post(`${url}/sum`, '[[1, 2, 3, 4], [0.5, 0.5, 0, 0]]')).toEqual({
        status: 200,
        json: [10, 1],
      });
      const bad = await post(`${url}/sum`, '[[1, 2, 3]]');
      expect(bad.status).toBe(400);
      expect(bad.json).toMatchObject({ type: 'BadInput' });
    });

    // Zero code from the installed packages: an ONNX model file served by the installed binary, runners in workers.
    writeFileSync(join(PROJECT, 'write-model.mjs'), WRITE_MODEL);
    await run(process.execPath, ['write-model.mjs'], { cwd: PROJECT, env: readerEnv({}) });
    await serve('double.onnx', async (url) => {
      expect(await post(`${url}/predict`, '[[1, 2, 3], [0.5, 0, -1]]')).toEqual({
        status: 200,
        json: [
          [2, 4, 6],
          [1, 0, -2],
        ],
      });
      const bad = await post(`${url}/predict`, '[[1, 2]]');
      expect(bad).toMatchObject({ status: 400, json: { code: 'TENSOR_SHAPE_MISMATCH' } });
    });

    // The .proto files ship in the tarball and the installed dist finds them: serveGrpc loads both.
    writeFileSync(join(PROJECT, 'protos.mjs'), GRPC_PROTOS);
    const { stdout } = await run(process.execPath, ['protos.mjs'], { cwd: PROJECT, env: readerEnv({}) });
    expect(JSON.parse(stdout)).toEqual({
      v2: join(PROJECT, 'node_modules/@tiffin/core/proto/inference/grpc_predict_v2.proto'),
      native: join(PROJECT, 'node_modules/@tiffin/core/proto/bentoml/grpc/v1/service.proto'),
      served: true,
    });
  }, 900_000);

  it('serves a service that mounts @koa/router routes, under tiffin serve and as a built package', async () => {
    // The user's own dependencies, from the registry as any npm user gets them (not core's).
    await npmInstall(['@koa/router@15.7.0', 'koa-body@8.0.1']);
    writeFileSync(join(PROJECT, 'site.mjs'), MOUNTED_SERVICE);
    await serve('site.mjs', checkMountedService, { TIFFIN_API_TOKEN: 't0ken' });

    // Built into a package (the router and koa-body recorded as its dependencies), then served by its tag.
    const home = join(WORK, 'tiffin-home');
    const built = await run(
      join(PROJECT, 'node_modules/.bin/tiffin'),
      ['build', 'site.mjs', '--no-lockfile'],
      {
        cwd: PROJECT,
        env: readerEnv({ TIFFIN_HOME: home }),
        timeout: 300_000,
      },
    );
    const tag = /Successfully built package (\S+)/.exec(built.stdout)?.[1];
    expect(tag, built.stdout + built.stderr).toMatch(/^site:/);
    const [name, version] = tag!.split(':');
    const manifest = JSON.parse(
      readFileSync(join(home, 'packages', name!, version!, 'package.json'), 'utf8'),
    ) as { dependencies: Record<string, string> };
    expect(manifest.dependencies).toMatchObject({ '@koa/router': '15.7.0', 'koa-body': '8.0.1' });
    await serve(tag!, checkMountedService, { TIFFIN_API_TOKEN: 't0ken', TIFFIN_HOME: home });
  }, 900_000);

  it("serve a TensorFlow.js model folder and the quickstart's trained ONNX model with zero code from the installed tiffin", async () => {
    // Needs the install above. The runner threads start from the packages' bundled runner-worker.js.
    writeFileSync(join(PROJECT, 'make-model.mjs'), TFJS_MODEL);
    const made = await run(process.execPath, ['make-model.mjs'], { cwd: PROJECT, env: readerEnv({}) });
    const { x, y } = JSON.parse(made.stdout) as { x: number[][]; y: number[][] };
    await serve('mlp', async (url) => {
      const res = await post(`${url}/predict`, JSON.stringify(x));
      expect(res.status).toBe(200);
      const got = (res.json as number[][]).flat();
      for (const [i, v] of y.flat().entries()) expect(got[i]).toBeCloseTo(v, 5);
      expect((await post(`${url}/predict`, '[[1, 2]]')).json).toMatchObject({
        code: 'TENSOR_SHAPE_MISMATCH',
      });
    });
    await serve(join(ROOT, 'examples/quickstart/model/iris.onnx'), async (url) => {
      const res = await post(`${url}/predict`, '[[5.1, 3.5, 1.4, 0.2]]');
      expect(res.status).toBe(200);
      const [p] = res.json as number[][];
      expect(p!.indexOf(Math.max(...p!))).toBe(0); // setosa
    });
  }, 300_000);
});

describe('an ONNX-only user (npm install @tiffin/cli @tiffin/diffusion)', () => {
  const APP = join(WORK, 'onnx-user');

  beforeAll(async () => {
    mkdirSync(APP);
    writeFileSync(
      join(APP, 'package.json'),
      JSON.stringify({ name: 'onnx-user', private: true, type: 'module' }),
    );
    const wanted = withTiffinDependencies(['@tiffin/cli', '@tiffin/diffusion']);
    // TF.js is an optional peer: nothing the ONNX engine needs depends on @tiffin/tfjs.
    expect(wanted).not.toContain('@tiffin/tfjs');
    await npmInstall(
      wanted.map((name) => tarballs.get(name)!),
      APP,
    );
  }, 600_000);

  it("type-checks an ONNX user's TypeScript against the installed declarations, TF.js absent", () => {
    writeFileSync(join(APP, 'onnx-user.ts'), ONNX_USER_TS);
    expect(typeErrors(join(APP, 'onnx-user.ts'))).toEqual([]);
  });

  it('installs no @tensorflow package', () => {
    const lock = JSON.parse(readFileSync(join(APP, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, unknown>;
    };
    const installed = Object.keys(lock.packages);
    expect(installed).toContain('node_modules/@tiffin/diffusion');
    expect(installed.filter((path) => /(^|\/)node_modules\/@tensorflow\//.test(path))).toEqual([]);
    expect(existsSync(join(APP, 'node_modules/@tensorflow'))).toBe(false);
  });

  it('imports @tiffin/diffusion and generates on onnxruntime without TF.js; asking for wasm in code names the install', async () => {
    writeFileSync(join(APP, 'generate.mjs'), ONNX_GENERATE);
    const { stdout } = await run(process.execPath, ['generate.mjs'], {
      cwd: APP,
      env: readerEnv({ TIFFIN_HOME: join(APP, 'home') }),
      timeout: 180_000,
    });
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      tfOnImport: string[];
      tfLoaded: string[];
      image: number[];
      tfjsEngine: { code: string; message: string } | null;
    };
    expect(seen.tfOnImport).toEqual([]);
    expect(seen.tfLoaded).toEqual([]);
    expect(seen.image).toEqual([64, 64, 64 * 64 * 3]);
    expect(seen.tfjsEngine?.code).toBe('MISSING_DEPENDENCY');
    expect(seen.tfjsEngine?.message).toBe(
      'the wasm backend (TensorFlow.js engine) needs packages that are not installed ' +
        '(@tensorflow/tfjs, @tensorflow/tfjs-backend-wasm): ' +
        'run `npm install @tensorflow/tfjs@4.22.0 @tensorflow/tfjs-backend-wasm@4.22.0`',
    );
  }, 240_000);

  it('serves the demo model on onnxruntime with the installed tiffin', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const server = new ServerProcess(
      join(APP, 'node_modules/.bin/tiffin'),
      ['diffusion', 'start', 'demo', '--backend', 'onnxruntime', '--port', String(port)],
      { cwd: APP, env: readerEnv({ TIFFIN_HOME: join(APP, 'home') }) },
    );
    try {
      // Ready only after its warm-up generation: the ONNX engine ran end to end in the model worker.
      await server.ready(`${url}/readyz`, 180_000);
      const res = await fetch(`${url}/text2img`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          prompt: 'a small blue square at the top left on a white background',
          num_inference_steps: 10,
          seed: 3,
        }),
      });
      expect([res.status, res.headers.get('content-type')]).toEqual([200, 'image/jpeg']);
      expect(jpegSize(new Uint8Array(await res.arrayBuffer()))).toEqual({ width: 64, height: 64 });
      // The page's script modules ship in the package and are served as JavaScript (a browser refuses others).
      const entry = await fetch(`${url}/ui/app.js`);
      expect([entry.status, entry.headers.get('content-type')]).toEqual([
        200,
        'text/javascript; charset=utf-8',
      ]);
      const modules = [...(await entry.text()).matchAll(/from '\.\/([a-z-]+\.js)'/g)].map((m) => m[1]);
      expect(modules.length).toBeGreaterThan(3);
      for (const name of modules) {
        const module = await fetch(`${url}/ui/${name}`);
        expect([name, module.status, module.headers.get('content-type')]).toEqual([
          name,
          200,
          'text/javascript; charset=utf-8',
        ]);
      }
      expect(server.output).toMatch(/"msg":"diffusion model ready".*"backend":"onnxruntime"/);
      server.child.kill('SIGTERM');
      expect(await server.exitsWithin(20_000)).toBe(true);
    } finally {
      server.kill();
    }
  }, 240_000);

  it('diffusion build demo makes a package that installs and serves on its own, as its Dockerfile runs it', async () => {
    const home = join(APP, 'build-home');
    // With its lockfile (npm install --package-lock-only): the optional TF.js peers stay optional in vendor/.
    const built = await tiffinExits(APP, ['diffusion', 'build', 'demo', '--engine', 'onnxruntime'], {
      TIFFIN_HOME: home,
    });
    const tag = /Successfully built package (\S+)/.exec(built.stdout)?.[1];
    expect(tag, built.stdout + built.stderr).toMatch(/^stable-diffusion:/);
    const [name, version] = tag!.split(':');
    // Copied out of the store and installed as the Dockerfile's RUN line does, with nothing of the build around it.
    const standalone = join(WORK, 'standalone-diffusion');
    cpSync(join(home, 'packages', name!, version!), standalone, { recursive: true });
    const dockerfile = readFileSync(join(standalone, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain('npm ci --omit=dev --ignore-scripts --no-audit --no-fund');
    // --prefer-online: the build resolved its lockfile against the live registry; a packument cached earlier may not
    // know a version published since (CI failed with ETARGET on a days-old @types/node).
    await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-online'], {
      cwd: standalone,
      env: readerEnv({}),
      timeout: 600_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(existsSync(join(standalone, 'node_modules/@tensorflow'))).toBe(false);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // The Dockerfile's CMD and ENV (TIFFIN_HOME a scratch folder), on a free port.
    const server = new ServerProcess(process.execPath, ['server.mjs'], {
      cwd: standalone,
      env: readerEnv({
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(port),
        TIFFIN_HOME: join(standalone, 'tiffin-tmp'),
      }),
    });
    try {
      await server.ready(`${url}/readyz`, 180_000);
      const res = await fetch(`${url}/text2img`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'a red circle', num_inference_steps: 2, seed: 1 }),
      });
      expect([res.status, res.headers.get('content-type')]).toEqual([200, 'image/jpeg']);
      expect(jpegSize(new Uint8Array(await res.arrayBuffer()))).toEqual({ width: 64, height: 64 });
    } finally {
      server.kill();
    }
  }, 600_000);

  it('asking for a TF.js engine or serving a TF.js model fails in one line giving the npm install command', async () => {
    const home = { TIFFIN_HOME: join(APP, 'home') };
    const wasm = await tiffinExits(APP, ['diffusion', 'start', 'demo', '--backend', 'wasm'], home);
    expect(wasm.code).toBe(1);
    expect(wasm.stderr.trim().split('\n')).toEqual([
      'tiffin: error: the wasm backend (TensorFlow.js engine) needs packages that are not installed ' +
        '(@tensorflow/tfjs, @tensorflow/tfjs-backend-wasm): ' +
        'run `npm install @tensorflow/tfjs@4.22.0 @tensorflow/tfjs-backend-wasm@4.22.0`',
    ]);
    const build = await tiffinExits(
      APP,
      ['diffusion', 'build', 'demo', '--engine', 'cpu', '--no-lockfile'],
      home,
    );
    expect(build.code).toBe(1);
    expect(build.stderr).toContain('run `npm install @tensorflow/tfjs@4.22.0`');

    // A TF.js model folder (its model.json names it so): served or imported, it needs @tiffin/tfjs.
    mkdirSync(join(APP, 'mlp'));
    writeFileSync(join(APP, 'mlp', 'model.json'), '{"format": "layers-model", "modelTopology": {}}');
    const tfjsLine =
      "tiffin: error: Serving tfjs models requires the package '@tiffin/tfjs'. Install it with `pnpm add @tiffin/tfjs` (or npm install @tiffin/tfjs).";
    for (const args of [
      ['serve', 'mlp'],
      ['models', 'import', 'mlp', '--name', 'mlp'],
    ]) {
      const refused = await tiffinExits(APP, args, home);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split('\n')).toEqual([tfjsLine]);
    }
  }, 240_000);
});
