import { type ChildProcess, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { writeTinyControlNet, writeTinyPipeline } from '@tiffin/diffusion/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_DIR, collectOutput, type Exited, spawnTiffin } from './cli-process.js';

/**
 * `tiffin diffusion build` end to end: build a package from the tiny pipeline, a LoRA folder, a tiny autoencoder and a
 * tiny ControlNet, then run
 * it the two ways its README/Dockerfile give (`tiffin serve <tag>`, and `node server.mjs` in the package).
 */

/** stderr less the build's step lines (`Bundling the service code (esbuild)...`): what is left is errors. */
const withoutSteps = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => !line.endsWith('...'))
    .join('\n');

const REPO = join(CLI_DIR, '..', '..');

/** The diffusion package's test helpers (outside this package's tsc root, so imported by URL). */
const { writeTinyLora, jpegSize } = (await import(
  new URL('../../diffusion/test/service/service-helpers.ts', import.meta.url).href
)) as {
  writeTinyLora: (dir: string, name: string, salt: string) => string;
  jpegSize: (bytes: Uint8Array) => { width: number; height: number };
};

/** The tiny autoencoder folder the diffusion package's tests build (a source file outside this tsc root). */
const { writeTinyAutoencoder } = (await import(
  new URL('../../diffusion/src/tiny/write-tiny-autoencoder.ts', import.meta.url).href
)) as { writeTinyAutoencoder: (dir: string) => string };

/** Stand-ins for docker/podman (shared with @tiffin/build's containerize tests; outside this tsc root). */
const { standInTool, DAEMON_DOWN } = (await import(
  new URL('../../build/test/container-tool-stand-in.ts', import.meta.url).href
)) as {
  standInTool: (bin: string, name: string, info?: { exit?: number; error?: string }) => Promise<string>;
  DAEMON_DOWN: string;
};

/** `tiffin ...` run from sources on the wasm backend, models only where TIFFIN_HOME says. */
function tiffin(args: string[], env: NodeJS.ProcessEnv) {
  return spawnTiffin(args, { TIFFIN_TF_BACKEND: 'wasm', TIFFIN_MODELS_DIR: '', ...env });
}

async function stop(proc: { child: ChildProcess; done: Promise<Exited> }): Promise<void> {
  if (proc.child.exitCode === null) proc.child.kill('SIGTERM');
  await proc.done;
}

function text2img(url: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${url}/text2img`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'a tiffin box', num_inference_steps: 2, seed: 7, ...extra }),
  });
}

async function jpeg(res: Response): Promise<Uint8Array> {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/jpeg');
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * What `npm ci` makes of the package's `file:` dependencies, offline: node_modules/@tiffin/* link to the
 * vendored copies, and every other dependency of those links to the copy this workspace installed for
 * the matching workspace package; the package's own registry dependencies (the engine's TF.js packages) link to
 * the copies the building CLI resolved them from (the registry is not reachable from every test run).
 */
function linkNodeModules(packageDir: string): void {
  const modules = join(packageDir, 'node_modules');
  const own = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const name of Object.keys(own.dependencies)) {
    if (name.startsWith('@tiffin/')) continue;
    const at = join(modules, name);
    mkdirSync(dirname(at), { recursive: true });
    symlinkSync(realpathSync(join(CLI_DIR, 'node_modules', name)), at, 'dir');
  }
  for (const folder of readdirSync(join(packageDir, 'vendor'))) {
    const vendored = join(packageDir, 'vendor', folder);
    const manifest = JSON.parse(readFileSync(join(vendored, 'package.json'), 'utf8')) as {
      name: string;
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const link = (name: string, target: string) => {
      const at = join(modules, name);
      if (existsSync(at)) return;
      mkdirSync(dirname(at), { recursive: true });
      symlinkSync(target, at, 'dir');
    };
    link(manifest.name, vendored);
    const workspacePackage = join(REPO, 'packages', manifest.name.replace('@tiffin/', ''));
    const deps = { ...manifest.dependencies, ...manifest.optionalDependencies };
    for (const name of Object.keys(deps)) {
      if (name.startsWith('@tiffin/')) continue;
      const installed = join(workspacePackage, 'node_modules', name);
      if (existsSync(installed)) link(name, realpathSync(installed));
    }
  }
}

let home: string;
let packageDir: string;
/** Scratch folders (each holds copies of the 8 MB tiny model), removed at the end. */
const scratch: string[] = [];
const scratchDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

beforeAll(async () => {
  const work = scratchDir('tiffin-diffusion-package-');
  home = join(work, 'home');
  const tiny = writeTinyPipeline(join(work, 'tiny'));
  const loras = join(work, 'loras');
  writeTinyLora(loras, 'style.safetensors', 'package-test');
  const vaeTiny = writeTinyAutoencoder(join(work, 'taesd'));
  const controlnet = writeTinyControlNet(join(work, 'tiny-controlnet'));
  const built = await tiffin(
    [
      'diffusion',
      'build',
      'stable-diffusion',
      '--model-id',
      tiny,
      '--lora-dir',
      loras,
      '--vae-tiny',
      vaeTiny,
      '--controlnet',
      `edges=${controlnet}`,
      '--name',
      'tiny-sd',
      '--version',
      '1',
      '--no-lockfile',
      // Service settings the package must keep (the tests run on wasm anyway).
      '--engine',
      'wasm',
      '--max-steps',
      '3',
    ],
    { TIFFIN_HOME: home },
  ).done;
  // stderr has only the steps, one line each as it starts (no terminal here): saving the model and LoRA, bundling...
  const steps = built.stderr.split('\n').filter(Boolean);
  // A slow step adds `  still <step> (30 s)` lines (a loaded machine): progress too, not errors.
  expect(steps.filter((line) => !line.endsWith('...') && !line.startsWith('  still '))).toEqual([]);
  expect(steps).toContain('Saving the LoRA files to the model store...');
  expect(steps).toContain('Saving the tiny autoencoder taesd to the model store...');
  expect(steps).toContain('Saving the ControlNet edges (tiny-controlnet) to the model store...');
  expect(steps).toContain('Bundling the service code (esbuild)...');
  expect(built.code).toBe(0);
  expect(built.stdout).toContain('Successfully built package tiny-sd:1');
  expect(built.stdout).toContain('npx tiffin serve tiny-sd:1');
  packageDir = join(home, 'packages', 'tiny-sd', '1');
}, 120_000);

describe('a package built by tiffin diffusion build', () => {
  it('carries the model, the LoRA folder, the tiny autoencoder and the vendored @tiffin packages, and records no build path', () => {
    const manifest = readFileSync(join(packageDir, 'manifest.yaml'), 'utf8');
    expect(manifest).toMatch(/^source: service\.mjs$/m);
    const [lora] = readdirSync(join(packageDir, 'models', 'tiny-sd-lora'));
    expect(readdirSync(join(packageDir, 'models', 'tiny-sd-lora', lora as string, 'files'))).toEqual([
      'style.safetensors',
    ]);
    const [tinyVersion] = readdirSync(join(packageDir, 'models', 'tiny-sd-vae-tiny'));
    expect(
      readdirSync(join(packageDir, 'models', 'tiny-sd-vae-tiny', tinyVersion as string, 'files')).sort(),
    ).toEqual(['config.json', 'diffusion_pytorch_model.safetensors']);
    const [controlNetVersion] = readdirSync(join(packageDir, 'models', 'tiny-sd-controlnet-edges'));
    expect(
      readdirSync(
        join(packageDir, 'models', 'tiny-sd-controlnet-edges', controlNetVersion as string, 'files'),
      ).sort(),
    ).toEqual(['config.json', 'diffusion_pytorch_model.safetensors']);
    expect(readdirSync(join(packageDir, 'vendor')).sort()).toEqual([
      'tiffin-core',
      'tiffin-diffusion',
      'tiffin-io-image',
      'tiffin-io-json',
      // diffusion's ONNX graph writer and provider resolution
      'tiffin-onnx',
    ]);
    // Built for --engine wasm: TF.js, an optional peer of @tiffin/diffusion, is recorded at the version installed.
    const { dependencies } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(dependencies).toMatchObject({
      '@tensorflow/tfjs': '4.22.0',
      '@tensorflow/tfjs-backend-wasm': '4.22.0',
    });
    // The vendored diffusion keeps its optional peers in ranges npm reads (pnpm's `workspace:` resolved).
    const vendored = readFileSync(join(packageDir, 'vendor', 'tiffin-diffusion', 'package.json'), 'utf8');
    expect(JSON.parse(vendored).peerDependencies).toMatchObject({ '@tiffin/tfjs': '>=0.1.0' });
    expect(vendored).not.toContain('workspace:');
    // The model worker is its own bundle; the service starts it from the vendored dist.
    expect(existsSync(join(packageDir, 'vendor', 'tiffin-diffusion', 'dist', 'model-worker.js'))).toBe(true);
    expect(readFileSync(join(packageDir, 'Dockerfile'), 'utf8')).toContain('CMD ["node", "server.mjs"]');
    // The bundled service module carries the build's settings.
    const service = readFileSync(join(packageDir, 'service.js'), 'utf8');
    expect(service).toMatch(/"?backend"?:\s*"wasm"/);
    expect(service).toMatch(/"?maxSteps"?:\s*3\b/);
  });

  it('refuses onnxruntime settings for another engine before building anything', async () => {
    const refused = await tiffin(
      ['diffusion', 'build', 'demo', '--engine', 'wasm', '--ort-threads', '2', '--no-lockfile'],
      { TIFFIN_HOME: scratchDir('tiffin-diffusion-refused-') },
    ).done;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--ort-threads applies to --engine onnxruntime, not wasm');
  });

  it('packages the demo with its Canny ControlNet, as `diffusion start demo` loads it', async () => {
    const demoHome = scratchDir('tiffin-diffusion-demo-package-');
    const built = await tiffin(
      [
        'diffusion',
        'build',
        'demo',
        '--name',
        'demo-pkg',
        '--version',
        '1',
        '--no-lockfile',
        '--engine',
        'wasm',
      ],
      { TIFFIN_HOME: demoHome },
    ).done;
    const steps = built.stderr.split('\n').filter(Boolean);
    expect(steps.filter((line) => !line.endsWith('...') && !line.startsWith('  still '))).toEqual([]);
    expect(built.code).toBe(0);
    expect(steps).toContain('Saving the ControlNet canny (controlnet-canny) to the model store...');
    const models = join(demoHome, 'packages', 'demo-pkg', '1', 'models', 'demo-pkg-controlnet-canny');
    const [version] = readdirSync(models);
    expect(readdirSync(join(models, version as string, 'files')).sort()).toEqual([
      'config.json',
      'diffusion_pytorch_model.safetensors',
    ]);
    // The generated service starts with it under the name `canny`.
    const service = readFileSync(join(demoHome, 'packages', 'demo-pkg', '1', 'service.js'), 'utf8');
    expect(service).toContain('canny');
  }, 120_000);

  it('serves POST /text2img with `tiffin serve <tag>`, with a request LoRA from the packaged folder', async () => {
    const served = tiffin(['serve', 'tiny-sd:1', '--port', '0'], { TIFFIN_HOME: home });
    try {
      const url = await served.url;
      const plain = await jpeg(await text2img(url));
      expect(jpegSize(plain)).toEqual({ width: 32, height: 32 });
      // It starts with the packaged tiny autoencoder: the default decoder, and another picture than the full VAE's.
      const tiny = await jpeg(await text2img(url, { decoder: 'tiny' }));
      expect(Buffer.from(tiny).equals(Buffer.from(plain))).toBe(true);
      const full = await jpeg(await text2img(url, { decoder: 'full' }));
      expect(Buffer.from(full).equals(Buffer.from(plain))).toBe(false);
      const styled = await jpeg(await text2img(url, { lora_weights: 'style.safetensors' }));
      expect(Buffer.from(styled).equals(Buffer.from(plain))).toBe(false);
      // The --max-steps recorded at build time holds in the package.
      const tooMany = await text2img(url, { num_inference_steps: 4 });
      expect(tooMany.status).toBe(400);
      expect(((await tooMany.json()) as { error: string }).error).toContain('3');
      const missing = await text2img(url, { lora_weights: 'absent.safetensors' });
      expect(missing.status).toBe(400);
      expect(((await missing.json()) as { error: string }).error).toMatch(
        /not found in the LoRA directories/,
      );
    } finally {
      await stop(served);
    }
  }, 60_000);

  it('runs as `node server.mjs` from a copy outside the workspace on its vendored dists (same image bytes)', async () => {
    const copy = join(scratchDir('tiffin-diffusion-deploy-'), 'app');
    cpSync(packageDir, copy, { recursive: true });
    linkNodeModules(copy);
    expect(realpathSync(join(copy, 'node_modules', '@tiffin', 'diffusion'))).toBe(
      realpathSync(join(copy, 'vendor', 'tiffin-diffusion')),
    );
    const server = collectOutput(
      spawn(process.execPath, ['server.mjs'], {
        cwd: copy,
        env: {
          ...process.env,
          HOST: '127.0.0.1',
          PORT: '0',
          TIFFIN_TF_BACKEND: 'wasm',
          TIFFIN_HOME: join(copy, '..', 'home'),
          TIFFIN_MODELS_DIR: '',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let fromPackage: Uint8Array;
    try {
      const url = await server.url;
      fromPackage = await jpeg(await text2img(url));
      // Its default decoder is the packaged tiny autoencoder, not the model's VAE.
      const full = await jpeg(await text2img(url, { decoder: 'full' }));
      expect(Buffer.from(full).equals(Buffer.from(fromPackage))).toBe(false);
      const styled = await jpeg(await text2img(url, { lora_weights: 'style.safetensors' }));
      expect(Buffer.from(styled).equals(Buffer.from(fromPackage))).toBe(false);
      // It starts with the packaged ControlNet: listed, and a unit guides the image (any picture is a map).
      const models = (await (await fetch(`${url}/models`)).json()) as { controlnets: string[] };
      expect(models.controlnets).toEqual(['edges']);
      const unit = { model: 'edges', image: Buffer.from(fromPackage).toString('base64') };
      const guided = await jpeg(await text2img(url, { controlnet: [unit] }));
      expect(Buffer.from(guided).equals(Buffer.from(fromPackage))).toBe(false);
      const again = await jpeg(await text2img(url, { controlnet: [unit] }));
      expect(Buffer.from(again).equals(Buffer.from(guided))).toBe(true);
    } finally {
      await stop(server);
    }
    expect(server.child.exitCode ?? 0).toBe(0);
    // The same request served from the workspace sources gives the same bytes.
    const served = tiffin(['serve', 'tiny-sd:1', '--port', '0'], { TIFFIN_HOME: home });
    try {
      const fromSources = await jpeg(await text2img(await served.url));
      expect(Buffer.from(fromPackage).equals(Buffer.from(fromSources))).toBe(true);
    } finally {
      await stop(served);
    }
  }, 90_000);
});

describe('tiffin diffusion build --containerize', () => {
  it('without a container tool: the package is built, then one error line and exit 1', async () => {
    // A PATH holding only node (tools the build spawns run on it), so docker, podman and buildah are absent.
    const bin = scratchDir('tiffin-node-only-');
    symlinkSync(process.execPath, join(bin, 'node'));
    const res = await tiffin(
      [
        'diffusion',
        'build',
        'stable-diffusion',
        '--model-id',
        join(
          packageDir,
          'models',
          'tiny-sd-model',
          readdirSync(join(packageDir, 'models', 'tiny-sd-model'))[0] as string,
          'files',
        ),
        '--name',
        'tiny-image',
        '--version',
        '1',
        '--no-lockfile',
        '--containerize',
      ],
      { TIFFIN_HOME: scratchDir('tiffin-cli-home-'), PATH: bin },
    ).done;
    expect(res.code).toBe(1);
    expect(res.stdout).toContain('Successfully built package tiny-image:1');
    expect(withoutSteps(res.stderr)).toBe(
      'tiffin: error: No container tool found on PATH: install one of docker, podman, buildah (or pass --backend)\n',
    );
  }, 60_000);

  it('passes over a docker client without daemon (the closed-pipe failure) and builds the image with podman', async () => {
    const bin = scratchDir('tiffin-tools-');
    await standInTool(bin, 'docker', { exit: 1, error: DAEMON_DOWN });
    const podman = await standInTool(bin, 'podman');
    const home = scratchDir('tiffin-cli-home-');
    const res = await tiffin(
      [
        'diffusion',
        'build',
        'stable-diffusion',
        '--model-id',
        join(
          packageDir,
          'models',
          'tiny-sd-model',
          readdirSync(join(packageDir, 'models', 'tiny-sd-model'))[0] as string,
          'files',
        ),
        '--name',
        'tiny-image',
        '--version',
        '1',
        '--no-lockfile',
        '--containerize',
        '--base-image',
        'localhost/node:20',
        '--memory-limit',
        '12Gi',
      ],
      // The stand-ins first; the rest of PATH for the commands they run themselves.
      { TIFFIN_HOME: home, PATH: `${bin}:${process.env.PATH}` },
    ).done;
    expect(withoutSteps(res.stderr)).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(
      `docker is installed but cannot build (${DAEMON_DOWN}); trying the next tool\n`,
    );
    expect(res.stdout).toContain(
      `Using podman (${podman})\nBuilding image tiny-image:1 from package tiny-image:1 with podman (its output follows)\nSuccessfully built image tiny-image:1 with podman\n`,
    );
    const built = join(home, 'packages', 'tiny-image', '1');
    const log = readFileSync(join(bin, 'podman.log'), 'utf8');
    expect(log).toContain(
      `-f ${join(built, 'Dockerfile')} -t tiny-image:1 --build-arg BASE_IMAGE=localhost/node:20 ${built}`,
    );
    // Diffusion defaults for the manifests (minutes to load, gigabytes of weights), and the option given.
    const manifests = readFileSync(join(built, 'kubernetes.yaml'), 'utf8');
    expect(manifests).toMatch(/limits:\n\s+cpu: "4"\n\s+memory: 12Gi/);
    expect(manifests).toMatch(/requests:\n\s+cpu: "2"\n\s+memory: 6Gi/);
  }, 60_000);
});
