import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { io } from '@tensorflow/tfjs';

/** Anything with tfjs's `save(handler)`: a LayersModel from this or another copy of tfjs. */
export interface SavableTfjsModel {
  save(handler: io.IOHandler): Promise<io.SaveResult>;
}

/** The weights as one buffer (tfjs may hand them over as a list of buffers). */
function weightBytes(data: io.ModelArtifacts['weightData']): Uint8Array {
  if (data === undefined) return new Uint8Array(0);
  const parts = Array.isArray(data) ? data : [data];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(new Uint8Array(p), at);
    at += p.byteLength;
  }
  return out;
}

/**
 * Write an in-memory tfjs model as the folder tfjs's own `file://` handler (tfjs-node) writes: `model.json`
 * (topology and weights manifest) and one `weights.bin` shard. Returns the path of model.json.
 */
export async function writeModelFolder(model: SavableTfjsModel, folder: string): Promise<string> {
  let artifacts: io.ModelArtifacts | undefined;
  await model.save({
    save: async (a: io.ModelArtifacts) => {
      artifacts = a;
      return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: 'JSON' } };
    },
  });
  if (!artifacts?.modelTopology) throw new Error('The model saved no topology');
  const weights = weightBytes(artifacts.weightData);
  const json = {
    modelTopology: artifacts.modelTopology,
    format: artifacts.format,
    generatedBy: artifacts.generatedBy,
    convertedBy: artifacts.convertedBy ?? null,
    ...(artifacts.trainingConfig ? { trainingConfig: artifacts.trainingConfig } : {}),
    ...(artifacts.signature ? { signature: artifacts.signature } : {}),
    ...(artifacts.userDefinedMetadata ? { userDefinedMetadata: artifacts.userDefinedMetadata } : {}),
    weightsManifest: [{ paths: ['weights.bin'], weights: artifacts.weightSpecs ?? [] }],
  };
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'weights.bin'), weights);
  const path = join(folder, 'model.json');
  await writeFile(path, JSON.stringify(json));
  return path;
}
