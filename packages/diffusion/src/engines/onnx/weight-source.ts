import { statSync } from 'node:fs';
import { legacyAliases, ModelFolderError } from '../../weights/folder.js';
import { SafetensorsFile } from '../../weights/safetensors.js';
import type { SourceTensor, WeightSource } from './graph-builder.js';

/**
 * A component's weights read tensor by tensor from its safetensors files (diffusers names;
 * legacy VAE attention names accepted), widened to float32.
 */
export class SafetensorsWeightSource implements WeightSource {
  private readonly where = new Map<string, SafetensorsFile>();
  private readonly opened: SafetensorsFile[];

  constructor(
    readonly component: string,
    readonly files: readonly string[],
  ) {
    this.opened = files.map((f) => SafetensorsFile.open(f));
    for (const f of this.opened) for (const n of f.names()) this.where.set(n, f);
  }

  private locate(name: string): string | undefined {
    return [name, ...legacyAliases(name)].find((n) => this.where.has(n));
  }

  has(name: string): boolean {
    return this.locate(name) !== undefined;
  }

  shape(name: string): readonly number[] {
    const source = this.locate(name);
    if (!source)
      throw new ModelFolderError(
        `${this.component}: weight ${name} is missing from ${this.files.join(', ')}`,
      );
    return (this.where.get(source) as SafetensorsFile).entry(source).shape;
  }

  read(name: string): SourceTensor {
    const source = this.locate(name);
    if (!source)
      throw new ModelFolderError(
        `${this.component}: weight ${name} is missing from ${this.files.join(', ')}`,
      );
    const file = this.where.get(source) as SafetensorsFile;
    return { shape: file.entry(source).shape, data: file.readFloat32(source) };
  }

  names(): string[] {
    return [...this.where.keys()];
  }

  /** Identifies the files' contents for the graph cache (path, size, modification time). */
  fingerprint(): string {
    return this.files.map((f) => `${f}:${statSync(f).size}:${statSync(f).mtimeMs}`).join('|');
  }

  close(): void {
    for (const f of this.opened) f.close();
  }
}
