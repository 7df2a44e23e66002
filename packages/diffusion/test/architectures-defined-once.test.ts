import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = join(import.meta.dirname, '..', 'src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Source without comments (they may name layers when they explain). */
const code = (path: string) => readFileSync(path, 'utf8').replace(/\/\*[\s\S]*?\*\/|(^|[^:])\/\/.*$/gm, '$1');

/**
 * diffusers/transformers module names of the SD architectures' layers. Wiring a network means naming its
 * parameters, so a forward pass written outside `src/architectures/` would contain some of these in a string.
 */
const LAYER_NAMES =
  /['"`][^'"`]*\b(resnets|transformer_blocks|attentions|down_blocks|up_blocks|mid_block|downsamplers|upsamplers|self_attn|time_emb_proj|conv_shortcut|time_embedding|text_model|encoder\.layers|to_q|to_k|to_v|to_out|proj_in|proj_out|ff\.net|conv_in|conv_out|conv_norm_out|quant_conv|post_quant_conv|group_norm|layer_norm1|norm1)\b/;

/** Where networks run: the shared ops, the engines (each with its operation backend) and the pipeline. */
const RUNNERS = ['ops', 'engines', 'pipeline'].flatMap((d) => files(join(src, d)));
/** The operation backends: they implement `ops/ops.ts` and know no architecture. */
const BACKENDS = [
  'ops/declare-ops.ts',
  'engines/tfjs/tfjs-ops.ts',
  'engines/tfjs/layers.ts',
  'engines/onnx/onnx-ops.ts',
];

describe('each architecture has one definition (src/architectures/)', () => {
  it('the folders that run networks name no layer of one', () => {
    // Guards against a vacuous pass: the backends and both engines are scanned.
    const scanned = RUNNERS.map((f) => relative(src, f));
    expect(scanned).toEqual(expect.arrayContaining(BACKENDS));
    expect(scanned).toEqual(expect.arrayContaining(['engines/onnx/unet-graph.ts', 'engines/tfjs/unet.ts']));
    const offenders = RUNNERS.filter((f) => LAYER_NAMES.test(code(f))).map((f) => relative(src, f));
    expect(offenders).toEqual([]);
  });

  it('the architectures import no backend, and the backends no architecture', () => {
    const imports = (f: string) =>
      [...code(f).matchAll(/^\s*import\b[^;]*?from\s*['"]([^'"]+)['"]/gm)].map((m) => m[1]);
    const architectures = files(join(src, 'architectures'));
    expect(architectures.length).toBeGreaterThanOrEqual(5);
    for (const f of architectures)
      for (const spec of imports(f))
        expect(spec, relative(src, f)).not.toMatch(/@tensorflow|onnxruntime|@tiffin\/onnx|\/engines\//);
    for (const f of [...files(join(src, 'ops')), ...BACKENDS.map((b) => join(src, b))])
      for (const spec of imports(f)) expect(spec, relative(src, f)).not.toMatch(/architectures\//);
  });

  it('weights are declared by running the definitions (DeclareOps), not listed beside them', () => {
    for (const f of files(join(src, 'architectures')))
      expect(code(f), relative(src, f)).not.toMatch(/kind:\s*'(linear|conv|plain)'/);
  });

  it('the name check catches a layer wired outside src/architectures/', () => {
    expect(LAYER_NAMES.test('o.conv2d(x, `down_blocks.0.resnets.0.conv_shortcut`, 1)')).toBe(true);
    expect(LAYER_NAMES.test("g.weight('text_model.final_layer_norm.weight')")).toBe(true);
    expect(LAYER_NAMES.test("g.node('Conv', [x, w], attrs)")).toBe(false);
  });
});
