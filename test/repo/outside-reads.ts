import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import ts from 'typescript';

/**
 * Finds places where a file of the repository would read something outside it: relative paths that
 * climb above the repository root, absolute machine paths, home-directory fallbacks in tests, and the
 * checkout's own absolute location. Static on purpose: it sees code paths no test happens to run.
 */

export interface OutsideRead {
  /** Repository-relative path of the file, with '/' separators. */
  file: string;
  line: number;
  rule: 'climbs-out' | 'machine-path' | 'home-in-test' | 'checkout-path';
  text: string;
}

/** Top-level folders that only hold one machine's or user's files; a literal path under them is not portable. */
const MACHINE_ROOTS = [
  'work',
  'home',
  'Users',
  'root',
  'mnt',
  'media',
  'srv',
  'opt',
  'data',
  'workspace',
  'shared',
];
const MACHINE_PATH = new RegExp(
  `^(?:file://)?(?:/(?:${MACHINE_ROOTS.join('|')})(?:/|$)|[A-Za-z]:[\\\\/](?:Users|home)[\\\\/])`,
);
const SCRIPT_EXT = /\.(?:[cm]?[jt]sx?)$/;
const TEXT_EXT =
  /\.(?:[cm]?[jt]sx?|json|ya?ml|sh|toml|proto|py)$|(?:^|\/)(?:\.ci\/run|Dockerfile|\.gitignore)$/;
/** Generated or vendored data: it names no path a test opens. */
const SKIPPED = /(?:^|\/)(?:pnpm-lock\.yaml|fixtures\/.*\.json)$/;

function isTestFile(file: string): boolean {
  return /(?:^|\/)(?:test|tests|__tests__)\//.test(file) || /\.(?:test|spec)\.[cm]?[jt]sx?$/.test(file);
}

/** Where a relative path in `file` lands, resolved from each base it may plausibly be read against. */
function escapes(file: string, packageDir: string, relative: string, fileRelative: boolean): boolean {
  const rel = relative.replace(/\\/g, '/');
  if (!/(?:^|\/)\.\.(?:\/|$)/.test(rel) || rel.startsWith('/')) return false;
  // Config files (tsconfig "extends", JSON, YAML) and `new URL(x, import.meta.url)` name paths relative to
  // the file; other code may also be run from its package's folder.
  const bases =
    fileRelative || /\.(?:json|ya?ml)$/.test(file)
      ? [posix.dirname(file)]
      : [posix.dirname(file), packageDir];
  return bases.some((base) => {
    const target = posix.normalize(posix.join(base === '.' ? '' : base, rel));
    // outside-reads: ignore (the test of a path, not a path)
    return target === '..' || target.startsWith('../');
  });
}

/** A line that says `outside-reads: ignore` (with its reason) is not a read: a pattern, a symlink target. */
const IGNORE_MARK = 'outside-reads: ignore';
const IGNORE_FILE_MARK = 'outside-reads: ignore-file';

/** Line numbers by offset, and the lines themselves, computed once a file. */
class Lines {
  private readonly starts: number[] = [0];
  readonly lines: string[];
  constructor(text: string) {
    this.lines = text.split('\n');
    for (const line of this.lines) this.starts.push(this.starts[this.starts.length - 1] + line.length + 1);
  }
  lineOf(index: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }
  ignored(line: number): boolean {
    return [this.lines[line - 1], this.lines[line - 2]].some((l) => l?.includes(IGNORE_MARK));
  }
}

/** The literal text pieces of string and template nodes; `${…}` parts break a template into pieces. */
function literalPieces(node: ts.Node): string[] | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isTemplateExpression(node)) {
    // `${dir}/../../x`: the piece after an expression is relative to whatever the expression is.
    return [node.head.text, ...node.templateSpans.map((span) => span.literal.text.replace(/^\//, ''))];
  }
  return undefined;
}

interface Check {
  file: string;
  packageDir: string;
  text: string;
  lines: Lines;
  out: OutsideRead[];
}

function checkLiteral(check: Check, value: string, index: number, fileRelative = false): void {
  const { file, packageDir, lines, out } = check;
  const line = lines.lineOf(index);
  if (lines.ignored(line)) return;
  if (MACHINE_PATH.test(value)) out.push({ file, line, rule: 'machine-path', text: value });
  else if (escapes(file, packageDir, value, fileRelative))
    out.push({ file, line, rule: 'climbs-out', text: value });
}

/** `new URL('<literal>', import.meta.url)`: the literal is relative to the file itself. */
function isModuleRelativeUrl(node: ts.Node): boolean {
  const parent = node.parent;
  return (
    parent !== undefined &&
    ts.isNewExpression(parent) &&
    parent.expression.getText() === 'URL' &&
    parent.arguments?.[0] === node &&
    parent.arguments[1]?.getText() === 'import.meta.url'
  );
}

function scanScript(check: Check): void {
  const { file, text, out } = check;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    const pieces = literalPieces(node);
    if (pieces) {
      const fileRelative = isModuleRelativeUrl(node);
      for (const piece of pieces) checkLiteral(check, piece, node.getStart(source), fileRelative);
    }
    // join(here, '..', '..', 'shared') / resolve(dir, '../..', 'x'): consecutive literal arguments are one path.
    if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && node.arguments) {
      let run: string[] = [];
      let start = 0;
      const flush = (): void => {
        if (run.length > 1) checkLiteral(check, run.join('/'), start);
        run = [];
      };
      for (const arg of node.arguments) {
        if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) {
          if (run.length === 0) start = arg.getStart(source);
          run.push(arg.text);
        } else flush();
      }
      flush();
    }
    if (isTestFile(file)) {
      const home =
        (ts.isCallExpression(node) && /^(?:os\.)?homedir$/.test(node.expression.getText(source))) ||
        (ts.isPropertyAccessExpression(node) &&
          /^process\.env\.(?:HOME|USERPROFILE)$/.test(node.getText(source)));
      if (home) {
        out.push({
          file,
          line: check.lines.lineOf(node.getStart(source)),
          rule: 'home-in-test',
          text: node.getText(source),
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

/** JSON, YAML, shell: no syntax tree, so path-shaped words are checked one by one. */
function scanPlain(check: Check): void {
  const words = /(?:file:\/\/)?(?:\/|[A-Za-z]:[\\/]|\.\.[\\/])[^\s'"`,;)(\]}>]*/g;
  for (const match of check.text.matchAll(words)) {
    // `/work` inside a URL or a longer word (`a/work/b`) is not an absolute path.
    const before = check.text[match.index - 1] ?? ' ';
    if (/[\w.:/-]/.test(before)) continue;
    // `ln -s ../lib/x link`: a symlink target is relative to the link, nothing is read from here.
    const lineStart = check.text.lastIndexOf('\n', match.index) + 1;
    if (/^\s*ln\s/.test(check.text.slice(lineStart, match.index))) continue;
    checkLiteral(check, match[0], match.index);
  }
}

/** Scans one file's text; `checkout` is the repository's absolute path on this machine (never committed). */
export function findOutsideReads(
  file: string,
  packageDir: string,
  text: string,
  checkout?: string,
): OutsideRead[] {
  // The scanner's own test: its inputs are outside paths on purpose. Only a file's first line counts.
  if (text.slice(0, text.indexOf('\n') >>> 0).includes(IGNORE_FILE_MARK)) return [];
  const check: Check = { file, packageDir, text, lines: new Lines(text), out: [] };
  if (SCRIPT_EXT.test(file)) scanScript(check);
  else scanPlain(check);
  if (checkout) {
    const index = text.indexOf(checkout);
    if (index >= 0)
      check.out.push({ file, line: check.lines.lineOf(index), rule: 'checkout-path', text: checkout });
  }
  return check.out;
}

/** Every tracked or new (not ignored) text file of the repository at `root`, scanned. */
export function scanRepository(root: string): { files: number; findings: OutsideRead[] } {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\0')
    .filter((file) => file.length > 0 && TEXT_EXT.test(file) && !SKIPPED.test(file));
  const packageDirs = new Set(listed.filter((f) => posix.basename(f) === 'package.json').map(posix.dirname));
  const packageOf = (file: string): string => {
    for (let dir = posix.dirname(file); ; dir = posix.dirname(dir)) {
      if (packageDirs.has(dir) || dir === '.') return dir;
    }
  };
  const findings: OutsideRead[] = [];
  let files = 0;
  for (const file of listed) {
    const absolute = posix.join(root, file);
    if (!existsSync(absolute)) continue; // deleted in the work tree, not yet committed
    const text = readFileSync(absolute, 'utf8');
    if (text.includes('\0')) continue;
    files++;
    findings.push(...findOutsideReads(file, packageOf(file), text, root));
  }
  return { files, findings };
}
