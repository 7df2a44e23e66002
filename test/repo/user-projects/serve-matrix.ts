import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, type ExpectStatic, expect, it } from 'vitest';
import { run } from '../packages.js';
import { answers, freePort, ServerProcess } from '../server-process.js';
import { type ProjectKind, type UserProject, userProject } from '../user-project.js';

/**
 * Every service file kind from every kind of reader's folder, with Tiffin installed by npm from the tarballs:
 * `tiffin serve` answers a good request 200 and a bad one 400, and the same API as a task. Then --reload, --workers, build and the
 * programmatic API on the combination that used to fail (.ts in an `npm init -y` folder), and the installed
 * packages' decoding threads.
 */

type Syntax = 'esm' | 'cjs';
interface Cell {
  /** The service's extension; a helper module beside it has the same one. */
  ext: '.ts' | '.mts' | '.cts' | '.js' | '.mjs' | '.cjs';
  syntax: Syntax;
  /** How the service names its helper, as a reader of that format writes it. */
  helper: string;
  folders: readonly ProjectKind[];
}

const ALL: readonly ProjectKind[] = ['bare', 'cjs', 'esm'];
const CELLS: readonly Cell[] = [
  { ext: '.ts', syntax: 'esm', helper: './rows-ts-esm.js', folders: ALL },
  // CommonJS syntax in .ts/.js only where the folder is CommonJS (in a "type": "module" folder it is an error).
  { ext: '.ts', syntax: 'cjs', helper: './rows-ts-cjs', folders: ['bare', 'cjs'] },
  { ext: '.mts', syntax: 'esm', helper: './rows-mts-esm.mjs', folders: ALL },
  { ext: '.cts', syntax: 'cjs', helper: './rows-cts-cjs.cjs', folders: ALL },
  { ext: '.cts', syntax: 'esm', helper: './rows-cts-esm.cjs', folders: ALL },
  { ext: '.js', syntax: 'esm', helper: './rows-js-esm.js', folders: ALL },
  { ext: '.js', syntax: 'cjs', helper: './rows-js-cjs.js', folders: ['bare', 'cjs'] },
  { ext: '.mjs', syntax: 'esm', helper: './rows-mjs-esm.mjs', folders: ALL },
  { ext: '.cjs', syntax: 'cjs', helper: './rows-cjs-cjs.cjs', folders: ALL },
];

const typed = (ext: string) => ext.endsWith('ts');
const id = (cell: Cell) => `${cell.ext.slice(1)}-${cell.syntax}`;

/** A helper module: row sums of a width-2 matrix (the service imports it, so resolution is tested too). */
function helperSource(cell: Cell, factor = 1): string {
  const sig = typed(cell.ext) ? '(data: Float64Array): number[]' : '(data)';
  const body = `{
  const out${typed(cell.ext) ? ': number[]' : ''} = [];
  for (let i = 0; i < data.length; i += 2) out.push((data[i] + data[i + 1]) * ${factor});
  return out;
}`;
  return cell.syntax === 'esm'
    ? `export function rowSums${sig} ${body}\n`
    : `function rowSums${sig} ${body}\nmodule.exports = { rowSums };\n`;
}

/**
 * The service: width-2 float64 rows in (shape enforced, so [[1, 2, 3]] is a 400), their sums out; also served as a
 * task unless `task` is false.
 */
function serviceSource(cell: Cell, task: boolean): string {
  const t = (annotation: string) => (typed(cell.ext) ? annotation : '');
  const imports =
    cell.syntax === 'esm'
      ? `import { NDArray, NumpyNdarray, Service } from '@tiffin/core';\nimport { rowSums } from '${cell.helper}';`
      : `const { NDArray, NumpyNdarray, Service } = require('@tiffin/core');\nconst { rowSums } = require('${cell.helper}');`;
  const exported = cell.syntax === 'esm' ? 'export default svc;' : 'module.exports = svc;';
  return `${imports}

const svc = new Service('sums');
svc.api(
  {
    input: new NumpyNdarray({ dtype: 'float64', shape: [-1, 2], enforce_shape: true }),
    output: new NumpyNdarray(),${task ? '\n    task: true,' : ''}
  },
  function sum(input${t(': InstanceType<typeof NDArray>')}) {
    return NDArray.from(rowSums(input.data${t(' as Float64Array')}), 'float64');
  },
);
${exported}
`;
}

function writeCell(project: UserProject, cell: Cell, { task = true } = {}): string {
  const helperFile = `rows-${id(cell)}${cell.ext}`;
  writeFileSync(join(project.dir, helperFile), helperSource(cell));
  const file = `svc-${id(cell)}${cell.ext}`;
  writeFileSync(join(project.dir, file), serviceSource(cell, task));
  return file;
}

async function post(url: string, body: string): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, json: await res.json() };
}

/** Good request 200 with the sums; bad shape 400 with a JSON body; with `task`, the same as a task (submit, get). */
async function answersGoodAndBad(url: string, expect: ExpectStatic, task = true): Promise<void> {
  expect(await post(`${url}/sum`, '[[1, 2], [3, 4]]')).toEqual({ status: 200, json: [3, 7] });
  const bad = await post(`${url}/sum`, '[[1, 2, 3]]');
  expect(bad.status).toBe(400);
  expect(bad.json).toMatchObject({ type: 'BadInput' });
  if (!task) return;
  const submitted = await post(`${url}/sum/submit`, '[[1, 2], [3, 4]]');
  expect(submitted.status).toBe(202);
  const { id } = submitted.json as { id: string };
  let status = '';
  for (let k = 0; k < 500 && !['succeeded', 'failed', 'cancelled'].includes(status); k++) {
    if (k > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    status = ((await (await fetch(`${url}/sum/status?id=${id}`)).json()) as { status: string }).status;
  }
  expect(status).toBe('succeeded');
  expect(await (await fetch(`${url}/sum/get?id=${id}`)).json()).toEqual([3, 7]);
  expect((await post(`${url}/sum/submit`, '[[1, 2, 3]]')).status).toBe(400);
}

/** `tiffin <args>` in the project until it is ready, `check`, then SIGTERM and a clean exit. */
async function serving(
  project: UserProject,
  args: string[],
  expect: ExpectStatic,
  check: (url: string, server: ServerProcess) => Promise<void>,
): Promise<void> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // Its own process group, so SIGTERM reaches a --reload child or --workers too.
  const server = new ServerProcess(project.bin('tiffin'), args, {
    cwd: project.dir,
    env: project.env({ PORT: String(port) }),
    detached: true,
  });
  try {
    await server.ready(`${url}/readyz`, 60_000);
    await check(url, server);
    process.kill(-(server.child.pid ?? 0), 'SIGTERM');
    expect(await server.exitsWithin(20_000)).toBe(true);
    expect(await answers(`${url}/livez`)).toBe(false);
  } finally {
    server.kill();
  }
}

const projects = new Map<ProjectKind, UserProject>();

beforeAll(async () => {
  for (const kind of ALL) projects.set(kind, await userProject({ kind }));
}, 900_000);

const combos = CELLS.flatMap((cell) =>
  cell.folders.map((kind) => ({ name: `${id(cell)} in a ${kind} folder`, cell, kind })),
);

// Concurrent: a server's start mostly waits for CPU, so a few at once finish sooner than one by one.
describe.concurrent('tiffin serve from npm-installed packages', () => {
  it.for(combos)(
    'serves $name (200, and 400 on a bad request)',
    { timeout: 120_000 },
    async ({ cell, kind }, { expect }) => {
      const project = projects.get(kind)!;
      const file = writeCell(project, cell);
      await serving(project, ['serve', file], expect, (url) => answersGoodAndBad(url, expect));
    },
  );
});

describe('the other ways in, for a .ts service in an `npm init -y` folder', () => {
  const cell = CELLS[0]!;

  it('serve --reload restarts with the edited helper, also after an editor replaced it by a rename', async () => {
    const project = projects.get('cjs')!;
    const file = writeCell(project, cell);
    const helper = join(project.dir, `rows-${id(cell)}${cell.ext}`);
    await serving(project, ['serve', file, '--reload'], expect, async (url, server) => {
      await answersGoodAndBad(url, expect);
      const sumsBecome = async (want: number[]) => {
        const deadline = Date.now() + 60_000;
        let sums: unknown;
        while (Date.now() < deadline) {
          sums = await post(`${url}/sum`, '[[1, 2], [3, 4]]').then(
            (r) => r.json,
            () => undefined,
          );
          if (JSON.stringify(sums) === JSON.stringify(want)) break;
          await new Promise((resolve) => setTimeout(resolve, 300));
        }
        expect(sums, server.output.slice(-2000)).toEqual(want);
      };
      writeFileSync(helper, helperSource(cell, 10));
      await sumsBecome([30, 70]);
      // What editors and `sed -i` do: a new file renamed over the old one; then an in-place write again.
      writeFileSync(`${helper}.swp`, helperSource(cell, 100));
      renameSync(`${helper}.swp`, helper);
      await sumsBecome([300, 700]);
      writeFileSync(helper, helperSource(cell, 1000));
      await sumsBecome([3000, 7000]);
    });
  }, 240_000);

  it('serve --workers 2 (and its refusal of in-memory tasks)', async () => {
    const project = projects.get('cjs')!;
    // Each worker process would hold its own in-memory tasks (docs/tasks.md): refused in one line, before forking.
    const refused = await run(project.bin('tiffin'), ['serve', writeCell(project, cell), '--workers', '2'], {
      cwd: project.dir,
      env: project.env(),
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/--workers 2 cannot serve the task APIs of 'sums' \(sum\).*--workers 1/),
    ]);
    const file = writeCell(project, cell, { task: false });
    await serving(project, ['serve', file, '--workers', '2'], expect, async (url, server) => {
      await answersGoodAndBad(url, expect, false);
      expect(server.output).toContain('"workers":2');
    });
  }, 120_000);

  it('build makes a package that serves', async () => {
    const project = projects.get('cjs')!;
    const file = writeCell(project, cell);
    const env = project.env({ TIFFIN_HOME: join(project.dir, '.tiffin') });
    const { stdout } = await run(project.bin('tiffin'), ['build', file, '--no-lockfile'], {
      cwd: project.dir,
      env,
      timeout: 300_000,
    });
    const tag = /Successfully built package (\S+)/.exec(stdout)?.[1];
    expect(tag, stdout).toMatch(/^sums:/);
    const port = await freePort();
    const server = new ServerProcess(project.bin('tiffin'), ['serve', tag!], {
      cwd: project.dir,
      env: { ...env, PORT: String(port) },
    });
    try {
      await server.ready(`http://127.0.0.1:${port}/readyz`, 60_000);
      await answersGoodAndBad(`http://127.0.0.1:${port}`, expect);
    } finally {
      server.kill();
    }
  }, 300_000);

  it('loadService() from @tiffin/cli loads every kind, once per file (one module graph)', async () => {
    const project = projects.get('cjs')!;
    const files = CELLS.filter((c) => c.folders.includes('cjs')).map((c) => writeCell(project, c));
    // A CommonJS script, as an `npm init -y` project's own code is.
    writeFileSync(
      join(project.dir, 'load-all.cjs'),
      `const { Service } = require('@tiffin/core');
const { loadService, parseServiceTarget } = require('@tiffin/cli');
(async () => {
  const results = {};
  for (const file of ${JSON.stringify(files)}) {
    const first = await loadService(parseServiceTarget(file));
    const again = await loadService(parseServiceTarget(file));
    results[file] = first instanceof Service && first === again;
  }
  console.log(JSON.stringify(results));
})();
`,
    );
    const { stdout } = await run(process.execPath, ['load-all.cjs'], {
      cwd: project.dir,
      env: project.env(),
    });
    expect(JSON.parse(stdout)).toEqual(Object.fromEntries(files.map((f) => [f, true])));
  }, 120_000);
});

/**
 * Work the installed io-pandas and io-image do in worker threads: each starts threads on its own
 * dist/*-thread.js, which must find @tiffin/core in the reader's node_modules. A CSV table over 16 KiB, and a
 * BMP file made from the example image io-image serves on the API page.
 */
const OFF_THREAD = `import { BufferedHttpRequest } from '@tiffin/core';
import { readResponseBody } from '@tiffin/core/internal';
import { Image } from '@tiffin/io-image';
import { PandasDataFrame } from '@tiffin/io-pandas';

const request = (type, body) => new BufferedHttpRequest({ headers: { 'content-type': type }, body });
const csv = 'a,b\\n' + Array.from({ length: 4000 }, (_, i) => i + ',x' + i).join('\\n');
const frame = await new PandasDataFrame().fromHttpRequest(request('text/csv', csv));
const png = Buffer.from(await new Image().exampleFiles()[''].bytes());
const image = await new Image().fromHttpRequest(request('image/png', png));
const bmp = await readResponseBody(await new Image({ mime_type: 'image/bmp' }).toHttpResponse(image, null));
const fromBmp = await new Image().fromHttpRequest(request('image/bmp', bmp));
console.log(JSON.stringify({ frame: frame.shape, bmp: [fromBmp.width, fromBmp.height] }));
`;

describe('decoding threads of the installed packages', () => {
  it('io-pandas decodes a large CSV body and io-image a BMP file in their worker threads', async () => {
    const project = projects.get('esm')!;
    writeFileSync(join(project.dir, 'off-thread.mjs'), OFF_THREAD);
    const { stdout } = await run(process.execPath, ['off-thread.mjs'], {
      cwd: project.dir,
      env: project.env(),
    });
    expect(JSON.parse(stdout)).toEqual({ frame: [4000, 2], bmp: [64, 48] });
  }, 120_000);
});

/** A service that fails to load, and what its one-line error must say (`{dir}` is the project's folder). */
const LOAD_ERRORS = [
  {
    name: 'a type-stripping error names file:line:column',
    kind: 'cjs',
    file: 'broken.ts',
    source: "import { Service } from '@tiffin/core';\nconst x: = 1;\n",
    says: ['{dir}/broken.ts:2:10:'],
  },
  {
    name: 'a package that is not installed says how to add it',
    kind: 'esm',
    file: 'needs.mjs',
    source: "import leftPad from 'left-pad';\nexport default leftPad;\n",
    says: ["imports 'left-pad', which is not installed: npm i left-pad"],
  },
  {
    name: 'CommonJS syntax in a "type": "module" folder says what to change',
    kind: 'esm',
    file: 'old.ts',
    source: "const { Service } = require('@tiffin/core');\nmodule.exports = new Service('x');\n",
    says: ['is an ES module ({dir}/package.json says "type": "module")', '.cts/.cjs'],
  },
] as const;

describe('load errors that say what to do', () => {
  it.each(LOAD_ERRORS)('$name', async ({ kind, file, source, says }) => {
    const project = projects.get(kind)!;
    writeFileSync(join(project.dir, file), source);
    const stderr = await run(project.bin('tiffin'), ['serve', file], {
      cwd: project.dir,
      env: project.env(),
    }).then(
      () => 'exited 0',
      (err: { stderr: string }) => err.stderr,
    );
    for (const text of says) expect(stderr).toContain(text.replace('{dir}', project.dir));
  });
});
