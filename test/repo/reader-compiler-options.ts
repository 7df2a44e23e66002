import ts from 'typescript';

/**
 * How a reader's project compiles TypeScript against the installed packages: Node's ESM resolution, strict,
 * the declarations as published (no workspace, no `source` condition). `types`: the global types it has.
 */
export function readerCompilerOptions(types: string[] = []): ts.CompilerOptions {
  return {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types,
  };
}
