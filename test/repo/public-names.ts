import ts from 'typescript';

/**
 * The names each module exports (values and types), as a user's `import { … }` sees them: what TypeScript's
 * checker lists for the module, re-exports followed. Resolved with the `source` condition, so it reads the
 * sources. One program for all the files (they share most of their import graph).
 */
export function exportedNames(...files: string[]): string[][] {
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    customConditions: ['source'],
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  return files.map((file) => {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`TypeScript did not read ${file}`);
    const module = checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${file} is not a module`);
    return checker
      .getExportsOfModule(module)
      .map((symbol) => symbol.name)
      .sort();
  });
}
