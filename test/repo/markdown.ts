import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Reading commands and code out of the repository's Markdown, the way a reader copies them. */

export interface CodeBlock {
  lang: string;
  text: string;
  /** 1-based line of the opening fence. */
  line: number;
  /**
   * The words after the language in the fence's info string (```` ```ts file=service.ts ````), as
   * `key=value` or bare flags (`check=docker`). Renderers use only the language.
   */
  meta: Record<string, string>;
}

export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)((?:[ \t]+\S+)*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    const meta = Object.fromEntries(
      open[2]
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map((word) => [word.split('=')[0], word.includes('=') ? word.slice(word.indexOf('=') + 1) : '']),
    );
    blocks.push({ lang: open[1], text: body.join('\n'), line: start + 1, meta });
  }
  return blocks;
}

/** The Markdown a reader follows: README.md, docs/*.md, and each package's and example's README. */
export function documentationFiles(root: string): string[] {
  const inDir = (dir: string, name: (f: string) => boolean) =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir))
          .filter(name)
          .sort()
          .map((f) => join(dir, f))
      : [];
  const readmes = ['packages', 'examples'].flatMap((dir) =>
    inDir(dir, () => true)
      .map((d) => join(d, 'README.md'))
      .filter((f) => existsSync(join(root, f))),
  );
  return ['README.md', ...inDir('docs', (f) => f.endsWith('.md')), ...readmes];
}

/** Inline code spans outside fenced blocks. */
export function inlineCode(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```\s*$/gm, '');
  return [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
}

/**
 * Splits a shell line into words with POSIX quoting ('…', "…", \x) and drops a trailing `# comment`.
 * Enough for documentation commands; no expansions.
 */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unclosed ' in: ${line}`);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let text = '';
      for (i++; i < line.length && line[i] !== '"'; i++) text += line[i] === '\\' ? line[++i] : line[i];
      if (i >= line.length) throw new Error(`unclosed " in: ${line}`);
      word = (word ?? '') + text;
    } else if (c === '\\') {
      word = (word ?? '') + (line[++i] ?? '');
    } else if (c === '#' && word === undefined) {
      break;
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** The command part of a shell line: the line up to its `# comment` (quotes respected), trimmed. */
export function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i).trim();
  }
  return line.trim();
}

/** Shell commands of a block: comment-only and empty lines dropped, `\` continuations joined. */
export function shellCommands(block: string): string[] {
  const joined = block.replace(/\\\n\s*/g, ' ');
  return joined
    .split('\n')
    .map((line) => withoutComment(line.replace(/^\$ /, '')))
    .filter((line) => line.length > 0);
}
