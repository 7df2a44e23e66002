import { DataType, type InitializerDef, type NodeDef } from '@tiffin/onnx';
import { quantizeInt8 } from '../../../weights/int8.js';
import { asBytes, consumers, float32Of, type GraphTensors, type WeightGraph } from './weight-pass.js';

/** Weights smaller than this stay float32 (a few norms and tiny projections: no gain, extra nodes). */
const MIN_VALUES = 1024;

const int = (value: number) => ({ kind: 'int', value }) as const;
const ints = (value: readonly number[]) => ({ kind: 'ints', value }) as const;
const INT64_MAX = Number.MAX_SAFE_INTEGER;

/** Strides and pads of a plain 2-D convolution the pass can rewrite (group 1, no dilation, explicit pads). */
function convPlan(
  node: NodeDef,
  dims: readonly number[],
): { stride: [number, number]; pads: [number, number, number, number] } | undefined {
  const a = node.attributes ?? {};
  const list = (name: string, fallback: number[]) => {
    const at = a[name];
    return at?.kind === 'ints' ? [...at.value] : fallback;
  };
  if (dims.length !== 4) return undefined;
  if (a.group && !(a.group.kind === 'int' && a.group.value === 1)) return undefined;
  if (a.auto_pad && !(a.auto_pad.kind === 'string' && a.auto_pad.value === 'NOTSET')) return undefined;
  if (list('dilations', [1, 1]).some((d) => d !== 1)) return undefined;
  const kernel = list('kernel_shape', [dims[2], dims[3]]);
  if (kernel[0] !== dims[2] || kernel[1] !== dims[3]) return undefined;
  const [sy, sx] = list('strides', [1, 1]);
  const [t, l, b, r] = list('pads', [0, 0, 0, 0]);
  return { stride: [sy, sx], pads: [t, l, b, r] };
}

/**
 * int8 weight-only quantization as a pass over a built float32 graph (weights int8, symmetric, one scale per output
 * channel; activations quantized to uint8 per tensor on each run, so no calibration):
 * - every `MatMul` whose second input is a 2-D float32 initializer `[K, N]` becomes com.microsoft
 *   `DynamicQuantizeMatMul` (ORT's fused DynamicQuantizeLinear + MatMulInteger, weight prepacked);
 * - every plain `Conv` (group 1, no dilation) with a float32 initializer kernel `[O, C, kh, kw]` becomes an im2col
 *   in uint8: DynamicQuantizeLinear, NHWC, padded with the zero point, the kh·kw shifted (strided) slices
 *   concatenated on channels, then com.microsoft `MatMulIntegerToFloat` against the kernel as `[kh·kw·C, O]` (scales
 *   and bias folded in) and back to NCHW. ORT's own ConvInteger was measured slower (no prepacked kernel, uint8
 *   weights only): see bench/onnx-int8-ops.ts.
 * Weights shared with any other consumer stay float32. Graph inputs (LoRA branches) are never quantized.
 */
export function int8WeightPass(graph: WeightGraph, tensors: GraphTensors): WeightGraph {
  const inits = new Map(graph.initializers.map((i) => [i.name, i]));
  const uses = consumers(graph.nodes);
  const dropped = new Set<string>();
  const added: InitializerDef[] = [];
  const nodes: NodeDef[] = [];
  const onlyUse = (name: string, node: NodeDef) =>
    uses.get(name)?.length === 1 && uses.get(name)?.[0].node === node;
  const floatInit = (name: string | undefined, rank: number): InitializerDef | undefined => {
    const init = name === undefined ? undefined : inits.get(name);
    if (!init || init.dataType !== DataType.FLOAT || init.dims.length !== rank) return undefined;
    return init.dims.reduce((a, b) => a * b, 1) >= MIN_VALUES ? init : undefined;
  };
  const addInit = (name: string, dataType: InitializerDef['dataType'], dims: number[], bytes: Uint8Array) => {
    added.push({ name, dataType, dims, data: tensors.store(bytes) });
    return name;
  };

  for (const node of graph.nodes) {
    const domain = node.domain ?? '';
    const w = floatInit(node.inputs[1], node.opType === 'MatMul' ? 2 : 4);
    if (domain !== '' || !w || !onlyUse(w.name, node)) {
      nodes.push(node);
      continue;
    }
    if (node.opType === 'MatMul') {
      const [k, n] = w.dims;
      const q = quantizeInt8(float32Of(tensors.bytes(w)), k, n, 1);
      dropped.add(w.name);
      nodes.push({
        opType: 'DynamicQuantizeMatMul',
        domain: 'com.microsoft',
        inputs: [
          node.inputs[0],
          addInit(`${w.name}.q8`, DataType.INT8, [k, n], asBytes(q.values)),
          addInit(`${w.name}.q8scale`, DataType.FLOAT, [n], asBytes(q.scales)),
        ],
        outputs: node.outputs,
        name: node.name,
      });
      continue;
    }
    const bias = node.inputs[2] ? inits.get(node.inputs[2]) : undefined;
    const plan = node.opType === 'Conv' ? convPlan(node, w.dims) : undefined;
    if (
      !plan ||
      (node.inputs[2] && (!bias || bias.dataType !== DataType.FLOAT || !onlyUse(bias.name, node)))
    ) {
      nodes.push(node);
      continue;
    }
    const [o, c, kh, kw] = w.dims;
    const q = quantizeInt8(float32Of(tensors.bytes(w)), 1, o, c * kh * kw);
    // [O, C, kh, kw] → [kh·kw·C, O]: row (ky·kw + kx)·C + c, the order the taps are concatenated in.
    const cols = new Int8Array(q.values.length);
    for (let r = 0; r < o; r++)
      for (let ci = 0; ci < c; ci++)
        for (let t = 0; t < kh * kw; t++) cols[(t * c + ci) * o + r] = q.values[(r * c + ci) * kh * kw + t];
    dropped.add(w.name);
    if (bias) dropped.add(bias.name);
    const out = node.outputs[0];
    const v = (suffix: string) => `${out}.${suffix}`;
    const i64 = (suffix: string, values: readonly number[]) =>
      addInit(v(suffix), DataType.INT64, [values.length], asBytes(BigInt64Array.from(values.map(BigInt))));
    nodes.push({
      opType: 'DynamicQuantizeLinear',
      inputs: [node.inputs[0]],
      outputs: [v('xq'), v('xs'), v('xz')],
    });
    nodes.push({
      opType: 'Transpose',
      inputs: [v('xq')],
      outputs: [v('nhwc')],
      attributes: { perm: ints([0, 2, 3, 1]) },
    });
    let colsIn = v('nhwc');
    if (kh * kw > 1 || plan.stride[0] > 1 || plan.stride[1] > 1) {
      const [top, left, bottom, right] = plan.pads;
      // Padded with the zero point: exactly 0.0 once dequantized.
      nodes.push({
        opType: 'Pad',
        inputs: [v('nhwc'), i64('pads', [0, top, left, 0, 0, bottom, right, 0]), v('xz')],
        outputs: [v('padded')],
      });
      const axes = i64('axes', [1, 2]);
      const steps = i64('steps', plan.stride);
      const taps: string[] = [];
      for (let ky = 0; ky < kh; ky++)
        for (let kx = 0; kx < kw; kx++) {
          // Tap (ky, kx) reads rows ky, ky + s, ... up to P − (kh − 1 − ky): floor((P − kh) / s) + 1 rows, the
          // output height, whatever the (symbolic) padded size P.
          const end = (k: number, at: number) => (at === k - 1 ? INT64_MAX : at - (k - 1));
          const tap = v(`tap${ky}_${kx}`);
          nodes.push({
            opType: 'Slice',
            inputs: [
              v('padded'),
              i64(`s${ky}_${kx}`, [ky, kx]),
              i64(`e${ky}_${kx}`, [end(kh, ky), end(kw, kx)]),
              axes,
              steps,
            ],
            outputs: [tap],
          });
          taps.push(tap);
        }
      nodes.push({ opType: 'Concat', inputs: taps, outputs: [v('cols')], attributes: { axis: int(3) } });
      colsIn = v('cols');
    }
    nodes.push({
      opType: 'MatMulIntegerToFloat',
      domain: 'com.microsoft',
      inputs: [
        colsIn,
        addInit(`${w.name}.q8`, DataType.INT8, [kh * kw * c, o], asBytes(cols)),
        v('xs'),
        addInit(`${w.name}.q8scale`, DataType.FLOAT, [o], asBytes(q.scales)),
        v('xz'),
        '',
        ...(bias ? [addInit(`${bias.name}.q8bias`, DataType.FLOAT, [o], tensors.bytes(bias).slice())] : []),
      ],
      outputs: [v('ynhwc')],
    });
    nodes.push({
      opType: 'Transpose',
      inputs: [v('ynhwc')],
      outputs: [out],
      attributes: { perm: ints([0, 3, 1, 2]) },
    });
  }
  return { nodes, initializers: [...graph.initializers.filter((i) => !dropped.has(i.name)), ...added] };
}
