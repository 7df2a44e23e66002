import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CORE_FOLDER_LAYERS,
  coreFolderCycles,
  coreFolderImports,
  coreFolderViolations,
  coreSources,
  DIFFUSION_FOLDER_LAYERS,
  DIFFUSION_FOLDERS,
  descriptorImports,
  folderCycles,
  folderImports,
  folderViolations,
  layerViolations,
  PACKAGE_LAYERS,
  packageSources,
  tiffinImports,
  workspaceSources,
} from './layers.js';

const root = join(import.meta.dirname, '..', '..');
const packages = workspaceSources(root);
const core = coreSources(root);
const diffusion = packageSources(root, 'diffusion');

/** The table's entries that allow a folder not listed below them (the table is read bottom up). */
const reachesUp = (table: Readonly<Record<string, readonly string[]>>) => {
  const order = Object.keys(table);
  return Object.entries(table).flatMap(([folder, allowed]) =>
    allowed
      .filter((below) => order.indexOf(below) >= order.indexOf(folder))
      .map((up) => `${folder} -> ${up}`),
  );
};

describe('package layers (test/repo/layers.ts)', () => {
  it('sees every package and its imports (no vacuous pass)', () => {
    expect(packages.length).toBeGreaterThanOrEqual(8);
    const cli = packages.find((p) => p.pkg === '@tiffin/cli');
    expect(cli?.files.some((f) => tiffinImports(f.source).includes('@tiffin/core'))).toBe(true);
  });

  it.each(packages.map((p) => [p.pkg, p]))('%s imports only the layers below it', (_name, p) => {
    expect(layerViolations(p.pkg, p.files)).toEqual([]);
  });

  it('refuses a forbidden import, a subpath import and an undeclared package', () => {
    const core = [{ file: 'packages/core/src/x.ts', source: "import { Image } from '@tiffin/io-image';" }];
    expect(layerViolations('@tiffin/core', core)).toEqual([
      { pkg: '@tiffin/core', file: 'packages/core/src/x.ts', imports: '@tiffin/io-image' },
    ]);
    const sub = [{ file: 'a.ts', source: "const m = await import('@tiffin/cli/internal');" }];
    expect(layerViolations('@tiffin/io-json', sub)).toHaveLength(1);
    expect(layerViolations('@tiffin/new-thing', [])).toHaveLength(1);
    expect(PACKAGE_LAYERS['@tiffin/core']).toEqual([]);
  });
});

describe('folder layers inside @tiffin/core (CORE_FOLDER_LAYERS)', () => {
  it('sees every folder of core and the imports between them (no vacuous pass)', () => {
    const folders = new Set(core.filter((f) => f.file.includes('/')).map((f) => f.file.split('/')[0]));
    expect([...folders].sort()).toEqual(Object.keys(CORE_FOLDER_LAYERS).sort());
    const server = core.filter((f) => f.file.startsWith('server/'));
    expect(server.some((f) => coreFolderImports(f.file, f.source).includes('runtime'))).toBe(true);
  });

  it('each folder imports only the folders listed for it', () => {
    expect(coreFolderViolations(core)).toEqual([]);
  });

  it('the folders form layers: no cycle among them, and the table lists each folder above what it imports', () => {
    expect(coreFolderCycles(core)).toEqual([]);
    expect(reachesUp(CORE_FOLDER_LAYERS)).toEqual([]);
  });

  it('finds a planted cycle between folders, two-way and longer, even where the table allows each import', () => {
    const planted = [
      { file: 'io/descriptor.ts', source: "import type { ProtoPayload } from '../grpc/messages.js';" },
      { file: 'grpc/server.ts', source: "import { IODescriptor } from '../io/descriptor.js';" },
      { file: 'runtime/runtime.ts', source: "import type { Logger } from '../server/logger.js';" },
      { file: 'server/app.ts', source: "import { registerV2 } from '../inference-protocol/routes.js';" },
      { file: 'inference-protocol/routes.ts', source: "import { Runtime } from '../runtime/runtime.js';" },
      { file: 'errors/index.ts', source: "// import { x } from '../io/x.js';" },
    ];
    expect(coreFolderCycles(planted)).toEqual([
      ['grpc', 'io', 'grpc'],
      ['inference-protocol', 'runtime', 'server', 'inference-protocol'],
    ]);
    // A table that allows every import between them passes the import check; the cycle check still fails.
    const folders = [...new Set(planted.map(({ file }) => file.split('/')[0] as string))];
    const allowAll = Object.fromEntries(folders.map((f) => [f, folders.filter((other) => other !== f)]));
    expect(coreFolderViolations(planted, allowAll)).toEqual([]);
    // Breaking one import of a cycle clears it.
    expect(coreFolderCycles(planted.filter((f) => f.file !== 'grpc/server.ts'))).toEqual([
      ['inference-protocol', 'runtime', 'server', 'inference-protocol'],
    ]);
  });

  it('refuses a forbidden import (io/ importing server/), a dynamic one, and an unlisted folder', () => {
    const io = [
      { file: 'io/descriptors/x.ts', source: "import { serve } from '../../server/serve.js';" },
      { file: 'store/y.ts', source: "const m = await import('../runtime/runtime.js'); // ../server/x.js" },
      {
        file: 'io/json/z.ts',
        source: "import { writeJson } from './write.js';\nimport { t } from '../descriptors/text.js';",
      },
      { file: 'brand-new/a.ts', source: '' },
    ];
    expect(coreFolderViolations(io)).toEqual([
      { pkg: '@tiffin/core', file: 'io/descriptors/x.ts', imports: 'server/' },
      { pkg: '@tiffin/core', file: 'store/y.ts', imports: 'runtime/' },
      {
        pkg: '@tiffin/core',
        file: 'brand-new/a.ts',
        imports: '(folder brand-new/ has no layer in CORE_FOLDER_LAYERS)',
      },
    ]);
  });

  it('keeps the transports and the runtime off the descriptor classes (io/descriptors/*)', () => {
    expect(descriptorImports(core)).toEqual([]);
    const planted = [
      { file: 'server/routes/a.ts', source: "import { Text } from '../../io/descriptors/text.js';" },
      { file: 'grpc/b.ts', source: "import { IODescriptor } from '../io/descriptor.js';" },
      { file: 'models/c.ts', source: "import { Tensors } from '../io/descriptors/tensors.js';" },
    ];
    expect(descriptorImports(planted)).toEqual([
      { pkg: '@tiffin/core', file: 'server/routes/a.ts', imports: 'io/descriptors/text.js' },
    ]);
  });
});

describe('folder layers inside @tiffin/diffusion (DIFFUSION_FOLDER_LAYERS)', () => {
  const folderOf = (file: string) => DIFFUSION_FOLDERS.folderOf(file);

  it('sees every folder of diffusion, each engine apart, and the imports between them (no vacuous pass)', () => {
    const folders = new Set(diffusion.map((f) => folderOf(f.file)).filter((f) => f !== null));
    expect([...folders].sort()).toEqual(Object.keys(DIFFUSION_FOLDER_LAYERS).sort());
    expect(folderOf('engines/onnx/load.ts')).toBe('engines/onnx');
    expect(folderOf('engines/engine-models.ts')).toBe('engines');
    expect(folderOf('backend.ts')).toBe('.');
    expect(folderOf('testing.ts')).toBeNull();
    const pipeline = diffusion.filter((f) => f.file.startsWith('pipeline/'));
    const reached = pipeline.flatMap((f) => folderImports(DIFFUSION_FOLDERS, f.file, f.source));
    expect(reached).toEqual(expect.arrayContaining(['engines/onnx', 'engines/tfjs', 'architectures']));
  });

  it('each folder imports only the folders listed for it: no engine reaches into the other, tiny/ only from tests', () => {
    expect(folderViolations(DIFFUSION_FOLDERS, diffusion, DIFFUSION_FOLDER_LAYERS)).toEqual([]);
    for (const [folder, allowed] of Object.entries(DIFFUSION_FOLDER_LAYERS))
      expect(allowed, folder).not.toContain('tiny');
    expect(DIFFUSION_FOLDER_LAYERS['engines/onnx']).not.toContain('engines/tfjs');
    expect(DIFFUSION_FOLDER_LAYERS['engines/tfjs']).not.toContain('engines/onnx');
  });

  it('the folders form layers: no cycle among them, and the table lists each folder above what it imports', () => {
    expect(folderCycles(DIFFUSION_FOLDERS, diffusion)).toEqual([]);
    expect(reachesUp(DIFFUSION_FOLDER_LAYERS)).toEqual([]);
  });

  it('refuses an import that climbs: one engine into the other, conversion into tiny/, a dynamic one, an entry', () => {
    const planted = [
      { file: 'engines/onnx/models.ts', source: "import type { LatentDistribution } from '../tfjs/vae.js';" },
      {
        file: 'checkpoints/inferred-configs.ts',
        source: "import { tinyConfigs } from '../tiny/tiny-configs.js';",
      },
      { file: 'engines/tfjs/unet.ts', source: "const p = await import('../../pipeline/pipeline.js');" },
      { file: 'service/generator.ts', source: "import { createPipeline } from '../index.js';" },
      { file: 'architectures/unet.ts', source: "// import { TfjsOps } from '../engines/tfjs/tfjs-ops.js';" },
      { file: 'index.ts', source: "export * from './tiny/tiny-configs.js';" },
      { file: 'models/unet.ts', source: '' },
    ];
    expect(folderViolations(DIFFUSION_FOLDERS, planted, DIFFUSION_FOLDER_LAYERS)).toEqual([
      { pkg: '@tiffin/diffusion', file: 'engines/onnx/models.ts', imports: 'engines/tfjs/' },
      { pkg: '@tiffin/diffusion', file: 'checkpoints/inferred-configs.ts', imports: 'tiny/' },
      { pkg: '@tiffin/diffusion', file: 'engines/tfjs/unet.ts', imports: 'pipeline/' },
      { pkg: '@tiffin/diffusion', file: 'service/generator.ts', imports: 'index.js/' },
      {
        pkg: '@tiffin/diffusion',
        file: 'models/unet.ts',
        imports: '(folder models/ has no layer in DIFFUSION_FOLDER_LAYERS)',
      },
    ]);
    const cycle = [
      {
        file: 'engines/onnx/load.ts',
        source: "import type { SdxlComponents } from '../../pipeline/components.js';",
      },
      {
        file: 'pipeline/components.ts',
        source: "import type { OnnxUNet } from '../engines/onnx/models.js';",
      },
    ];
    expect(folderCycles(DIFFUSION_FOLDERS, cycle)).toEqual([['engines/onnx', 'pipeline', 'engines/onnx']]);
  });
});
