import { DataType, type InitializerDef, type NodeDef } from '@tiffin/onnx';
import { quantizeInt8 } from '../../../weights/int8.js';
import { asBytes, consumers, float32Of, type GraphTensors, type WeightGraph } from './weight-pass.js';

/** Weights smaller than this stay float32 (a few norms and tiny projections: no gain, extra nodes). */
const MIN_VALUES = 1024;

const int = (value: number) => ({ kind: 'int', value }) as const;

/**
 * int8 weight-only quantization as a pass over a built float32 graph: every `MatMul` whose second input is a 2-D
 * float32 initializer `[K, N]` becomes com.microsoft `DynamicQuantizeMatMul` (ORT's fused
 * DynamicQuantizeLinear + MatMulInteger: the activation quantized to uint8 per tensor on each run, the weight int8
 * with one scale per output column); every `Conv` (group 1) with a float32 initializer kernel `[O, C, kh, kw]`
 * becomes DynamicQuantizeLinear + `ConvInteger` (uint8 kernel, zero point 128 = symmetric int8 shifted, since ORT's
 * CPU ConvInteger runs uint8 kernels fastest) with the per-output-channel scale and bias applied after. Weights
 * shared with any other consumer stay float32. Graph inputs (LoRA branches) are never quantized.
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
    const group = node.attributes?.group;
    const bias = node.inputs[2] ? inits.get(node.inputs[2]) : undefined;
    if (
      node.opType !== 'Conv' ||
      (group && group.kind === 'int' && group.value !== 1) ||
      (node.inputs[2] && (!bias || bias.dataType !== DataType.FLOAT || !onlyUse(bias.name, node)))
    ) {
      nodes.push(node);
      continue;
    }
    const [o, c, kh, kw] = w.dims;
    const q = quantizeInt8(float32Of(tensors.bytes(w)), 1, o, c * kh * kw);
    const shifted = new Uint8Array(q.values.length);
    for (let i = 0; i < shifted.length; i++) shifted[i] = q.values[i] + 128;
    dropped.add(w.name);
    const out = node.outputs[0];
    const [xq, xs, xz] = [`${out}.xq`, `${out}.xs`, `${out}.xz`];
    nodes.push({ opType: 'DynamicQuantizeLinear', inputs: [node.inputs[0]], outputs: [xq, xs, xz] });
    nodes.push({
      opType: 'ConvInteger',
      inputs: [
        xq,
        addInit(`${w.name}.q8`, DataType.UINT8, [o, c, kh, kw], shifted),
        xz,
        addInit(`${w.name}.q8zero`, DataType.UINT8, [], new Uint8Array([128])),
      ],
      outputs: [`${out}.i32`],
      attributes: node.attributes,
    });
    nodes.push({
      opType: 'Cast',
      inputs: [`${out}.i32`],
      outputs: [`${out}.f32`],
      attributes: { to: int(DataType.FLOAT) },
    });
    const scale = addInit(`${w.name}.q8scale`, DataType.FLOAT, [o, 1, 1], asBytes(q.scales));
    nodes.push({ opType: 'Mul', inputs: [xs, scale], outputs: [`${out}.scale`] });
    const scaled = bias ? `${out}.nobias` : out;
    nodes.push({ opType: 'Mul', inputs: [`${out}.f32`, `${out}.scale`], outputs: [scaled] });
    if (bias) {
      dropped.add(bias.name);
      const b = addInit(`${bias.name}.c11`, DataType.FLOAT, [o, 1, 1], tensors.bytes(bias).slice());
      nodes.push({ opType: 'Add', inputs: [scaled, b], outputs: [out] });
    }
  }
  return { nodes, initializers: [...graph.initializers.filter((i) => !dropped.has(i.name)), ...added] };
}
