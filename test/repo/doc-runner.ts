import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { parse as parseYaml } from 'yaml';
import type { CodeBlock } from './markdown.js';
import { shellCommands } from './markdown.js';
import { run } from './packages.js';
import { readerCompilerOptions } from './reader-compiler-options.js';
import { freePort, ServerProcess } from './server-process.js';
import type { UserProject } from './user-project.js';

/**
 * Runs a document's fenced blocks as a reader would, in a project with Tiffin installed from the tarballs.
 *
 * What each block is, from its fence's info string (```` ```ts file=service.ts ````):
 * - no marker: it runs. A TypeScript/JavaScript block is saved as the file it names (`file=` or a first-line
 *   `// name.ts` comment; else `snippet-<line>.ts`) and type-checked; a block without `export default` is
 *   also run with `npx tsx` (what its `console.log(...); // X` lines show must be printed); a block with one (a
 *   service) is served with `npx tiffin serve` and called as its API page calls it: each POST route of its
 *   `/docs.json` with the example the page fills in must answer below 400, and one the page sends without a body
 *   below 500. A shell block runs
 *   line by line in the document's folder, variables it exports kept for the next lines as in a terminal;
 *   `npx tiffin serve`, `npx tiffin diffusion start` and `npm start` are started in the background (until the
 *   document ends) and waited for.
 *   A `# → X` line after a command is the output the doc shows: the command's output must match it (`...`
 *   stands for anything).
 * - `check=<why> instead=<test>`: it cannot run here (a container daemon, a cluster, a download): TypeScript is
 *   type-checked, shell is parsed (`bash -n`), Python compiled, JSON and YAML parsed; `instead` names the test (a
 *   repository path, which must exist) that runs what the block shows, and is required.
 * - `run-by=<test>`: another test runs it (named there); here shell, Python and data are parsed, code is left
 *   to that test.
 * - `cwd=checkout`: a shell block the doc runs from the repository root (after the README's install).
 * - `beside=<repository path>`: the reader works next to that file or example folder (its `.ts` files,
 *   `src/`, `fixtures/` and `model/`), copied into the document's folder first.
 * - no language: shown output or a diagram, not code.
 * Ports 3000 and 3001 in commands and code become free ports, so documents run side by side.
 */

export type BlockFate = 'run' | 'check' | 'run-elsewhere' | 'listing';

export interface BlockResult {
  line: number;
  lang: string;
  fate: BlockFate;
  /** For a block that cannot run here: `check=<why>`, and the test that runs it instead. */
  standIn?: string;
  problem?: string;
}

const CODE = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs']);
const SHELL = new Set(['sh', 'bash', 'shell']);

export function fateOf(block: CodeBlock): BlockFate {
  if (block.lang === '' || block.lang === 'text' || block.lang === 'console') return 'listing';
  if (block.meta['run-by'] !== undefined) return 'run-elsewhere';
  if (block.meta.check !== undefined) return 'check';
  if (CODE.has(block.lang) || SHELL.has(block.lang)) return 'run';
  return 'check'; // data (json, yaml) and other languages: parsed
}

/** The file a code block is saved as. */
export function fileOf(block: CodeBlock): string {
  if (block.meta.file) return block.meta.file;
  const named = /^\/\/ ([\w./-]+\.(?:ts|mts|js|mjs))\b/.exec(block.text);
  if (named) return named[1]!;
  return `snippet-${block.line}.${block.lang.startsWith('j') || block.lang === 'mjs' ? 'mjs' : 'ts'}`;
}

function typeCheck(dir: string, files: string[]): Map<string, string[]> {
  const program = ts.createProgram(
    files.map((f) => join(dir, f)),
    readerCompilerOptions(['node']),
  );
  const out = new Map<string, string[]>();
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const file = d.file ? d.file.fileName.slice(dir.length + 1) : '(project)';
    const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    const list = out.get(file) ?? [];
    list.push(`${file}:${at}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    out.set(file, list);
  }
  return out;
}

function syntaxProblem(block: CodeBlock): string | undefined {
  const text = block.text;
  if (SHELL.has(block.lang)) {
    const r = spawnSync('bash', ['-n'], { input: text, encoding: 'utf8' });
    return r.status === 0 ? undefined : r.stderr.trim();
  }
  if (block.lang === 'python') {
    const r = spawnSync('python3', ['-c', 'import ast,sys; ast.parse(sys.stdin.read())'], {
      input: text,
      encoding: 'utf8',
    });
    if (r.error) return undefined; // no python3 here: nothing to compile with
    return r.status === 0 ? undefined : r.stderr.trim().split('\n').at(-1);
  }
  try {
    if (block.lang === 'json') JSON.parse(text.trim().startsWith('"') ? `{${text}}` : text);
    if (block.lang === 'yaml' || block.lang === 'yml') parseYaml(text);
  } catch (err) {
    return String(err);
  }
  return undefined;
}

/** A block that cannot run here must name the test that runs it instead (`instead=<repository path>`). */
function standIn(block: CodeBlock): string | undefined {
  if (block.meta.check === undefined) return undefined; // data (json, yaml): parsing it is all there is
  const instead = block.meta.instead;
  if (!instead) return `\`check=${block.meta.check}\` without \`instead=<test>\`: name the test that runs it`;
  return existsSync(join(ROOT, instead)) ? undefined : `instead=${instead}: no such file in the repository`;
}

/** `3000`/`3001` → this run's ports, in a command or a source file. */
function withPorts(text: string, ports: Map<string, number>): string {
  return text.replace(/\b(300[01])\b/g, (m) => String(ports.get(m) ?? m));
}

/** Whether `actual` output matches the doc's `expected` (`...` matches anything; spaces do not matter). */
export function outputMatches(actual: string, expected: string): boolean {
  const squash = (s: string) => s.replace(/\s+/g, '');
  const parts = squash(expected)
    .split('...')
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(parts.join('[\\s\\S]*')).test(squash(actual));
}

/** Commands that serve until stopped: run in the background while the rest of the document runs. */
/** What a block shows a `console.log(...)` prints: its line's trailing `// comment`. */
function shownLogs(source: string): string[] {
  return [...source.matchAll(/^\s*console\.log\(.*\);\s*\/\/ (.+)$/gm)].map((m) => m[1]!.trim());
}

const SERVER = /^(?:npx tiffin (?:serve|diffusion start)\b|npm start\b)/;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A repository file, or an example folder's `.ts` files and `src/`, into `dir`. */
function copyBeside(path: string, dir: string): void {
  const from = join(ROOT, path);
  if (!statSync(from).isDirectory()) {
    cpSync(from, join(dir, basename(path)));
    return;
  }
  for (const entry of readdirSync(from)) {
    if (entry.endsWith('.ts') || ['src', 'fixtures', 'model'].includes(entry))
      cpSync(join(from, entry), join(dir, entry), { recursive: true });
  }
}

interface OpenApiOperation {
  parameters?: Array<{ required?: boolean }>;
  requestBody?: { content?: Record<string, { example?: unknown; schema?: JsonSchema }> };
}
interface OpenApi {
  paths?: Record<string, { post?: OpenApiOperation }>;
}
interface JsonSchema {
  type?: string;
  example?: unknown;
  properties?: Record<string, JsonSchema>;
}

/** A value for a schema as Swagger UI makes one up: its example, else a placeholder of its type. */
function sample(schema: JsonSchema): unknown {
  if (schema.example !== undefined) return schema.example;
  const placeholders: Record<string, unknown> = {
    string: 'string',
    number: 0,
    integer: 0,
    boolean: true,
    array: [],
  };
  if (schema.type === 'object' || schema.properties)
    return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, sample(v)]));
  return placeholders[schema.type ?? ''] ?? null;
}

/**
 * What the API page sends for an operation: the example of the body's first media type (the API's own, or the
 * schema's), a JSON object built from the schema's properties' examples as Swagger UI builds one, else no body.
 */
function pageRequest(op: OpenApiOperation): { example: boolean; init: RequestInit } {
  const [type, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
  if (!type || !media) return { example: false, init: {} };
  let example = media.example ?? media.schema?.example;
  if (example === undefined && type.includes('json') && media.schema?.type === 'object')
    example = sample(media.schema);
  // A file chooser or form the page leaves for the reader: nothing to send.
  if (example === undefined || type.startsWith('multipart/') || !/json|text/.test(type))
    return { example: false, init: {} };
  const body = type.includes('json') ? JSON.stringify(example) : String(example);
  return { example: true, init: { headers: { 'content-type': type }, body } };
}

export class DocRunner {
  readonly results: BlockResult[] = [];
  private readonly servers: ServerProcess[] = [];
  private readonly ports = new Map<string, number>();

  constructor(
    private readonly project: UserProject,
    /** The document, relative to the repository (for messages). */
    readonly doc: string,
  ) {}

  private get stateFile(): string {
    return join(this.project.dir, '.doc-shell-state');
  }

  /** The reader's environment, with a Tiffin home of this document's own (stores, packages). */
  private env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return this.project.env({ TIFFIN_HOME: join(this.project.dir, '.tiffin-home'), ...extra });
  }

  async run(blocks: CodeBlock[]): Promise<void> {
    this.ports.set('3000', await freePort());
    this.ports.set('3001', await freePort());
    const dir = this.project.dir;
    writeFileSync(this.stateFile, '');
    for (const block of blocks) if (block.meta.beside) copyBeside(block.meta.beside, dir);
    // Every code file first (a doc may show the client before the service), then one type-check for all.
    const codeFiles = new Map<CodeBlock, string>();
    for (const block of blocks) {
      // Another test runs it (in its own project): only parsed here, so not written or type-checked.
      if (!CODE.has(block.lang) || fateOf(block) === 'listing' || fateOf(block) === 'run-elsewhere') continue;
      const file = fileOf(block);
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), withPorts(block.text, this.ports));
      codeFiles.set(block, file);
    }
    const diagnostics = typeCheck(
      dir,
      [...codeFiles.values()].filter((f) => /\.m?ts$/.test(f)),
    );
    try {
      for (const block of blocks) {
        const fate = fateOf(block);
        const result: BlockResult = { line: block.line, lang: block.lang, fate };
        if (block.meta.check !== undefined)
          result.standIn = `${block.meta.check}; instead: ${block.meta.instead ?? 'none named'}`;
        this.results.push(result);
        if (fate === 'listing') continue;
        const file = codeFiles.get(block);
        if (file) {
          const found = diagnostics.get(file);
          if (found) result.problem = found.join('\n');
          else if (fate === 'check') result.problem = standIn(block);
          else if (fate === 'run' && !/^export default /m.test(block.text))
            result.problem = await this.script(file, shownLogs(block.text));
          else if (fate === 'run') result.problem = await this.service(file);
          continue;
        }
        if (fate !== 'run') {
          result.problem = standIn(block) ?? (CODE.has(block.lang) ? undefined : syntaxProblem(block));
          continue;
        }
        result.problem = syntaxProblem(block) ?? (await this.shell(block));
      }
    } finally {
      await this.stopServers();
    }
  }

  /** A script block: `npx tsx <file>` in the project, with a time limit; `shown` must be in what it prints. */
  private async script(file: string, shown: string[]): Promise<string | undefined> {
    try {
      const { stdout } = await run(this.project.bin('tsx'), [file], {
        cwd: this.project.dir,
        env: this.env(),
        timeout: 120_000,
      });
      const missing = shown.find((want) => !outputMatches(stdout, want));
      return missing === undefined
        ? undefined
        : `npx tsx ${file} printed ${JSON.stringify(stdout.slice(0, 300))}, the doc shows ${JSON.stringify(missing)}`;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      return `npx tsx ${file}: ${(e.stderr || e.message).trim().split('\n').slice(-6).join('\n')}`;
    }
  }

  /**
   * A service block: `npx tiffin serve <file>` on a port of its own, then every POST route of its `/docs.json`
   * called as the API page calls it ("Try it out", then "Execute").
   */
  private async service(file: string): Promise<string | undefined> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const server = new ServerProcess(this.project.bin('tiffin'), ['serve', file], {
      cwd: this.project.dir,
      env: this.env({ PORT: String(port) }),
      detached: true,
    });
    try {
      await server.ready(`${url}/readyz`, 120_000);
      const docs = (await (await fetch(`${url}/docs.json`)).json()) as OpenApi;
      for (const [path, item] of Object.entries(docs.paths ?? {})) {
        const post = item.post;
        // A route with a path parameter or a query id (a task's cancel) needs a value the page cannot guess.
        if (!post || path.includes('{') || (post.parameters ?? []).some((p) => p.required)) continue;
        const sent = pageRequest(post);
        const res = await fetch(`${url}${path}`, { method: 'POST', ...sent.init });
        const body = await res.text();
        if (res.status >= (sent.example ? 400 : 500))
          return `npx tiffin serve ${file}: POST ${path} ${sent.example ? `with the API page's example ${JSON.stringify(sent.init.body).slice(0, 120)}` : 'without a body, as the API page sends it,'} answered ${res.status} ${body.slice(0, 300)}`;
      }
      return undefined;
    } catch (err) {
      return `npx tiffin serve ${file}: ${(err as Error).message.split('\n').slice(-8).join('\n')}`;
    } finally {
      process.kill(-(server.child.pid ?? 0), 'SIGTERM');
      if (!(await server.exitsWithin(20_000))) server.kill();
    }
  }

  private async shell(block: CodeBlock): Promise<string | undefined> {
    const cwd = block.meta.cwd === 'checkout' ? ROOT : this.project.dir;
    const lines = shellCommands(block.text);
    const expected = new Map<number, string>();
    // `# → X` under a command: shellCommands drops comment lines, so read them from the text.
    let index = -1;
    for (const raw of block.text.replace(/\\\n\s*/g, ' ').split('\n')) {
      const arrow = /^\s*# → (.*)$/.exec(raw);
      if (arrow) expected.set(index, arrow[1]!);
      else if (raw.trim() && !raw.trim().startsWith('#')) index++;
    }
    for (const [i, line] of lines.entries()) {
      // One shell for the whole document, as a reader's terminal: variables exported earlier are still set.
      const substituted = withPorts(line, this.ports);
      const command = `source ${this.stateFile}; ${substituted}`;
      if (SERVER.test(substituted.replace(/^(?:\w+=\S*\s+)+/, ''))) {
        const failed = await this.startServer(substituted, cwd).then(
          () => undefined,
          (err: Error) => `\`${line}\` did not start: ${err.message.split('\n').slice(-8).join('\n')}`,
        );
        if (failed) return failed;
        continue;
      }
      const r = spawnSync(
        'bash',
        ['-c', `${command}\nstatus=$?; export -p > ${this.stateFile}; exit $status`],
        {
          cwd,
          env: this.env(),
          encoding: 'utf8',
          timeout: 180_000,
        },
      );
      const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
      const want = expected.get(i);
      if (want !== undefined) {
        const status = /^(\d{3}) (.*)$/.exec(want);
        if (!outputMatches(output, status ? status[2]! : want))
          return `\`${line}\` printed ${JSON.stringify(output.slice(0, 300))}, the doc shows ${JSON.stringify(want)}`;
      } else if (r.status !== 0) {
        return `\`${line}\` exited ${r.status}: ${output.trim().split('\n').slice(-4).join('\n')}`;
      }
    }
    return undefined;
  }

  private async startServer(command: string, cwd: string): Promise<void> {
    const port = /--port (\d+)/.exec(command)?.[1] ?? String(this.ports.get('3000'));
    // `exec` so that SIGTERM reaches the server; leading `VAR=value` words stay in front of it.
    const [, assignments, rest] = /^((?:\w+=\S*\s+)*)([\s\S]*)$/.exec(command)!;
    const server = new ServerProcess('bash', ['-c', `source ${this.stateFile}; ${assignments}exec ${rest}`], {
      cwd,
      env: this.env({ PORT: port }),
      detached: true,
    });
    this.servers.push(server);
    await server.ready(`http://127.0.0.1:${port}/readyz`, 120_000);
  }

  private async stopServers(): Promise<void> {
    for (const server of this.servers) {
      server.child.kill('SIGTERM');
      if (!(await server.exitsWithin(20_000))) server.kill();
    }
  }
}
