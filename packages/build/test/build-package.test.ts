import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ModelStore } from '@tiffin/core';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { buildPackage, npmVersion, PackageStore, type StoredPackage } from '../src/index.js';

const fixture = fileURLToPath(new URL('./fixtures/greeter/service.ts', import.meta.url));
let home: string;
let previousHome: string | undefined;
let built: StoredPackage;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'tiffin-build-'));
  previousHome = process.env.TIFFIN_HOME;
  process.env.TIFFIN_HOME = home;
  delete process.env.TIFFIN_MODELS_DIR;
  await new ModelStore().save({ name: 'greeter-words', files: { 'word.txt': 'namaste' } });
  built = await buildPackage({ service: `${fixture}:greeter`, lockfile: false, labels: { team: 'web' } });
}, 180_000);

afterAll(async () => {
  if (previousHome === undefined) delete process.env.TIFFIN_HOME;
  else process.env.TIFFIN_HOME = previousHome;
  await rm(home, { recursive: true, force: true });
});

describe('buildPackage', () => {
  it('stores the package under $TIFFIN_HOME/packages/<name>/<version> with a manifest', async () => {
    expect(built.path).toBe(join(home, 'packages', 'greeter', built.manifest.version));
    expect(built.manifest.version).toMatch(/^[0-9a-f]{16}$/);
    const manifest = parse(await readFile(join(built.path, 'manifest.yaml'), 'utf8'));
    expect(manifest).toMatchObject({
      name: 'greeter',
      tag: built.tag,
      service: 'greeter',
      entry: 'service.js',
      labels: { team: 'web' },
      models: [expect.stringMatching(/^greeter-words:[0-9a-f]{16}$/)],
      dependencies: { '@tiffin/core': 'file:./vendor/tiffin-core' },
    });
    expect(manifest.source).toMatch(/fixtures\/greeter\/service\.ts:greeter$/);
    expect(Date.parse(manifest.creationTime)).not.toBeNaN();
    expect(manifest.apis.map((a: { name: string; route: string }) => [a.name, a.route])).toEqual([
      ['greet', '/greet'],
      ['add', '/sum'],
      ['word', '/word'],
    ]);
    expect(manifest.apis[0].input).toMatchObject({ id: 'tiffin.io.Text' });
    expect(manifest.apis[1].output).toMatchObject({ id: 'tiffin.io.JSON' });
    expect((await new PackageStore().get('greeter:latest')).tag).toBe(built.tag);
  });

  it('bundles the service and its relative imports, keeping @tiffin/core external', async () => {
    const code = await readFile(join(built.path, 'service.js'), 'utf8');
    expect(code).toContain('function greeting(name)'); // the relative import is inlined
    expect(code).toMatch(/from ["']@tiffin\/core["']/);
    expect(code).toContain('TIFFIN_MODELS_DIR');
    expect(code).not.toContain('class Service');
  });

  it('writes package.json with exact dependencies and vendors the built @tiffin/core', async () => {
    const pkg = JSON.parse(await readFile(join(built.path, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({
      name: 'greeter',
      version: npmVersion(built.manifest.version),
      type: 'module',
      scripts: { start: 'node server.mjs' },
      dependencies: { '@tiffin/core': 'file:./vendor/tiffin-core' },
    });
    const vendored = JSON.parse(await readFile(join(built.path, 'vendor/tiffin-core/package.json'), 'utf8'));
    expect(vendored.name).toBe('@tiffin/core');
    expect(JSON.stringify(vendored.exports)).not.toContain('source');
    expect(vendored.dependencies.koa).toBe('3.3.0');
    expect(vendored.devDependencies).toBeUndefined();
    expect((await stat(join(built.path, 'vendor/tiffin-core/dist/index.js'))).isFile()).toBe(true);
    await expect(stat(join(built.path, 'vendor/tiffin-core/src'))).rejects.toThrow();
    expect(await readFile(join(built.path, 'server.mjs'), 'utf8')).toContain(
      "import service from './service.js'",
    );
  });

  it('copies the declared models from the model store', async () => {
    const [tag] = built.manifest.models;
    const version = tag?.split(':')[1] ?? '';
    expect(await readFile(join(built.path, 'models/greeter-words', version, 'files/word.txt'), 'utf8')).toBe(
      'namaste',
    );
    const copied = await new ModelStore(join(built.path, 'models')).get('greeter-words:latest');
    expect(copied.tag).toBe(tag);
  });

  it('writes a Dockerfile with a non-root user, EXPOSE 3000 and a /readyz health check', async () => {
    const dockerfile = await readFile(join(built.path, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^ARG BASE_IMAGE=node:20-bookworm-slim$/m);
    expect(dockerfile).toMatch(/^FROM \$\{BASE_IMAGE\}$/m);
    expect(dockerfile).toMatch(/^USER 1000:1000$/m);
    expect(dockerfile).toMatch(/^EXPOSE 3000$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n\s+CMD .*\/readyz/m);
    expect(dockerfile).toMatch(/^CMD \["node", "server.mjs"\]$/m);
    expect(dockerfile).toContain('npm ci --omit=dev');
    // The Dockerfile language service's checks (instructions, flags, arguments): no problem at all.
    expect(lintDockerfile(dockerfile).map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
    // ...and they do catch a broken one.
    expect(
      lintDockerfile(dockerfile.replace('HEALTHCHECK --interval', 'HEALTHCHECK --intervl')),
    ).toHaveLength(1);
  });

  it('leaves every file readable and every folder enterable by the non-root user the image runs as', async () => {
    // Model store entries are made in mkdtemp folders (0700): copied as they are, the image could not read them.
    const unreadable: string[] = [];
    for (const entry of await readdir(built.path, { withFileTypes: true, recursive: true })) {
      const path = join(entry.parentPath, entry.name);
      const wanted = entry.isDirectory() ? 0o555 : 0o444;
      if (((await stat(path)).mode & wanted) !== wanted) unreadable.push(path);
    }
    expect(unreadable).toEqual([]);
    expect((await stat(built.path)).mode & 0o555).toBe(0o555);
  });

  it('writes Kubernetes manifests: a Deployment probing /readyz and /livez, a Service, HPA and PDB', async () => {
    const docs = parseAllDocuments(await readFile(join(built.path, 'kubernetes.yaml'), 'utf8')).map((d) =>
      d.toJS(),
    );
    const [deployment, service] = docs;
    expect(docs.map((d) => d.kind)).toEqual([
      'Deployment',
      'Service',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
    ]);
    const container = deployment.spec.template.spec.containers[0];
    expect(container.image).toBe(built.tag);
    expect(container.ports[0]).toEqual({ name: 'http', containerPort: 3000, protocol: 'TCP' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'http' });
    expect(deployment.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
    expect(deployment.spec.selector.matchLabels).toEqual(
      deployment.spec.template.metadata.labels && { 'app.kubernetes.io/name': 'greeter' },
    );
    expect(service.kind).toBe('Service');
    expect(service.spec.selector).toEqual({ 'app.kubernetes.io/name': 'greeter' });
    expect(service.spec.ports[0]).toMatchObject({ port: 80, targetPort: 'http' });
  });

  it('gives the same content-hash version when built again, and honours --name/--version', async () => {
    const again = await buildPackage({
      service: `${fixture}:greeter`,
      lockfile: false,
      labels: { team: 'web' },
    });
    expect(again.tag).toBe(built.tag);
    const named = await buildPackage({
      service: `${fixture}:greeter`,
      lockfile: false,
      name: 'hello',
      version: '1.2.0',
    });
    expect(named.tag).toBe('hello:1.2.0');
    expect(JSON.parse(await readFile(join(named.path, 'package.json'), 'utf8')).version).toBe('0.0.0-v1-2-0');
  }, 120_000);

  it('fails clearly on a missing export or a missing model', async () => {
    await expect(buildPackage({ service: `${fixture}:nope`, lockfile: false })).rejects.toThrow(
      /no Service exported as 'nope'/,
    );
    await expect(buildPackage({ service: join(home, 'missing.ts'), lockfile: false })).rejects.toThrow(
      /not found/,
    );
    await new ModelStore().delete('greeter-words');
    await expect(buildPackage({ service: `${fixture}:greeter`, lockfile: false })).rejects.toThrow(
      /No model named 'greeter-words'/,
    );
  });
});
