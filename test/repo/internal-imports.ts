import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** The subpath the workspace packages share core's internals through. */
export const INTERNAL = '@tiffin/core/internal';

/** Where the other workspace packages keep code that imports core: every package but core, the bench, the repo tests, the examples. */
const FOLDERS = ['packages', 'bench', 'test', 'examples'];
const CODE = /\.(?:c|m)?(?:t|j)sx?$/;

/**
 * Every name a file takes from `@tiffin/core/internal`: named imports and re-exports, the names destructured
 * from `await import(…)`, the properties read from a namespace (`import * as core`, `const core = await
 * import(…)`), `import('…').Name` types, and the same in the code a template literal writes out (a generated
 * module). `*` stands for a re-export of everything.
 */
export function internalNamesIn(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  const namespaces = new Set<string>();
  const isInternal = (node: ts.Node | undefined): boolean =>
    !!node && ts.isStringLiteralLike(node) && node.text === INTERNAL;
  const bind = (binding: ts.BindingName): void => {
    if (ts.isIdentifier(binding)) namespaces.add(binding.text);
    else if (ts.isObjectBindingPattern(binding))
      for (const element of binding.elements) {
        const key = element.propertyName ?? element.name;
        if (ts.isIdentifier(key) || ts.isStringLiteralLike(key)) names.push(key.text);
      }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && isInternal(node.moduleSpecifier)) {
      const bindings = node.importClause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
      else if (bindings) for (const e of bindings.elements) names.push((e.propertyName ?? e.name).text);
    } else if (ts.isExportDeclaration(node) && isInternal(node.moduleSpecifier)) {
      const clause = node.exportClause;
      if (!clause || ts.isNamespaceExport(clause)) names.push('*');
      else for (const e of clause.elements) names.push((e.propertyName ?? e.name).text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      isInternal(node.arguments[0])
    ) {
      let up: ts.Node = node.parent;
      while (ts.isAwaitExpression(up) || ts.isParenthesizedExpression(up)) up = up.parent;
      if (ts.isVariableDeclaration(up)) bind(up.name);
      else if (ts.isPropertyAccessExpression(up)) names.push(up.name.text);
    } else if (
      (ts.isStringLiteral(node) ||
        ts.isNoSubstitutionTemplateLiteral(node) ||
        ts.isTemplateExpression(node)) &&
      node.getText().includes(INTERNAL) &&
      !isInternal(node)
    ) {
      // Code a package writes out (the module `tiffin build` generates for a model) imports from it too.
      names.push(...internalNamesIn(file, node.getText().slice(1, -1)));
    } else if (ts.isImportTypeNode(node) && isInternal((node.argument as ts.LiteralTypeNode).literal)) {
      if (node.qualifier)
        names.push(ts.isIdentifier(node.qualifier) ? node.qualifier.text : node.qualifier.left.getText());
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (namespaces.size > 0) {
    const reads = (node: ts.Node): void => {
      if (
        (ts.isPropertyAccessExpression(node) || ts.isQualifiedName(node)) &&
        ts.isIdentifier(ts.isPropertyAccessExpression(node) ? node.expression : node.left)
      ) {
        const left = ts.isPropertyAccessExpression(node) ? node.expression : node.left;
        const right = ts.isPropertyAccessExpression(node) ? node.name : node.right;
        if (namespaces.has((left as ts.Identifier).text)) names.push(right.text);
      }
      ts.forEachChild(node, reads);
    };
    reads(source);
  }
  return names;
}

function codeFiles(dir: string): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return ['node_modules', 'dist', '.turbo'].includes(entry.name) ? [] : codeFiles(path);
    return CODE.test(entry.name) ? [path] : [];
  });
}

/** Each name the workspace outside core imports from `@tiffin/core/internal`, with the files that import it. */
export function internalImports(root: string): Map<string, string[]> {
  const core = join(root, 'packages', 'core');
  const out = new Map<string, string[]>();
  for (const folder of FOLDERS) {
    for (const path of codeFiles(join(root, folder))) {
      if (path.startsWith(core)) continue;
      const text = readFileSync(path, 'utf8');
      if (!text.includes(INTERNAL)) continue;
      for (const name of internalNamesIn(path, text)) {
        const files = out.get(name) ?? [];
        files.push(relative(root, path));
        out.set(name, files);
      }
    }
  }
  return out;
}

/** What `@tiffin/core/internal` exports that no workspace package imports (sorted): each should go. */
export function unusedInternalNames(
  exported: readonly string[],
  imported: ReadonlyMap<string, unknown>,
): string[] {
  return exported.filter((name) => !imported.has(name)).sort();
}

/** The `export * from …` lines of an entry's source: an entry that lists its names has none. */
export function exportStars(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  return source.statements
    .filter(
      (s): s is ts.ExportDeclaration =>
        ts.isExportDeclaration(s) && (!s.exportClause || ts.isNamespaceExport(s.exportClause)),
    )
    .map((s) => s.getText());
}
