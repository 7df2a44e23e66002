/**
 * Which ONNX Runtime CPU operators run int8 weight-only linear and convolution layers fastest here: one SD1.5-shaped
 * layer per graph (64×64 latents, batch 2), f32 against each int8 form, runs alternated, min/median/max, load average.
 * Linear: `MatMul` f32 · `DynamicQuantizeMatMul` (the fused form of DynamicQuantizeLinear + MatMulInteger) ·
 * `MatMulNBits` 8-bit (block 128, accuracy level 4 = int8 compute) · QDQ (`DequantizeLinear` + `MatMul`).
 * Convolution: `Conv` f32 · DynamicQuantizeLinear + `ConvInteger` · a uint8 im2col into `MatMulIntegerToFloat` (what
 * the int8 pass emits) · QDQ (`DequantizeLinear` + `Conv`). Both: f16 storage (a Cast folded at load, or run each call).
 *
 * Usage (from packages/diffusion): nice -n 10 tsx --conditions=source bench/onnx-int8-ops.ts [--threads=2] [--runs=3]
 */
import { loadavg } from 'node:os';
import { DataType, encodeModel, type InitializerDef, loadOrt, type NodeDef } from '@tiffin/onnx';
import { float32ToHalf } from '../src/weights/dtype.js';

const args = process.argv.slice(2);
const opt = (name: string, def: number) =>
  Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def);
const threads = opt('threads', 2);
const runs = opt('runs', 3);
const ort = await loadOrt();
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

const bytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const raw = (name: string, dataType: InitializerDef['dataType'], dims: number[], data: ArrayBufferView) =>
  ({ name, dataType, dims, data: { kind: 'raw', bytes: bytes(data) } }) as InitializerDef;
const rand = (n: number, scale: number) => {
  const a = new Float32Array(n);
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    a[i] = ((x / 2 ** 32) * 2 - 1) * scale;
  }
  return a;
};

async function time(
  label: string,
  nodes: NodeDef[],
  inits: InitializerDef[],
  input: { name: string; dims: number[] },
  outName: string,
  /** Keep Cast nodes on initializers at run time (ORT's constant folding off). */
  noFolding = false,
): Promise<() => Promise<number>> {
  const model = encodeModel({
    graph: {
      name: label,
      nodes,
      initializers: inits,
      inputs: [{ name: input.name, elemType: DataType.FLOAT, shape: input.dims }],
      outputs: [{ name: outName, elemType: DataType.FLOAT, shape: [] }],
    },
    opsets: { '': 17, 'com.microsoft': 1 },
  });
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
    ...(noFolding ? { extra: { optimization: { disable_specified_optimizers: 'ConstantFolding' } } } : {}),
  });
  const x = new ort.Tensor(
    'float32',
    rand(
      input.dims.reduce((a, b) => a * b, 1),
      1,
    ),
    input.dims,
  );
  await session.run({ [input.name]: x });
  return async () => {
    const s = performance.now();
    await session.run({ [input.name]: x });
    return performance.now() - s;
  };
}

/**
 * The float forms of one layer reading weight `w`: f32, and f16 storage (the weight as float16 and a Cast to float32,
 * folded into a float32 initializer when the session opens, ORT's default, or kept and run on every call with
 * constant folding off: half the weight memory).
 */
async function floatForms(
  forms: Record<string, () => Promise<number>>,
  w: Float32Array,
  dims: number[],
  layer: NodeDef,
  input: { name: string; dims: number[] },
): Promise<void> {
  forms.f32 = await time('f32', [layer], [raw('w', DataType.FLOAT, dims, w)], input, 'y');
  const cast: NodeDef = {
    opType: 'Cast',
    inputs: ['w16'],
    outputs: ['w'],
    attributes: { to: { kind: 'int', value: DataType.FLOAT } },
  };
  const w16 = raw('w16', DataType.FLOAT16, dims, float32ToHalf(w));
  forms['f16 folded at load'] = await time('f16 folded', [cast, layer], [w16], input, 'y');
  forms['f16 Cast each run'] = await time('f16 cast', [cast, layer], [w16], input, 'y', true);
}

/** Per-output-channel symmetric int8 of `[K, N]` (MatMul layout): column scales. */
function quantCols(w: Float32Array, k: number, n: number) {
  const scale = new Float32Array(n);
  for (let c = 0; c < n; c++) {
    let m = 0;
    for (let r = 0; r < k; r++) m = Math.max(m, Math.abs(w[r * n + c]));
    scale[c] = m / 127 || 1;
  }
  const q = new Int8Array(k * n);
  for (let r = 0; r < k; r++) for (let c = 0; c < n; c++) q[r * n + c] = Math.round(w[r * n + c] / scale[c]);
  return { q, scale };
}

async function linearCase(m: number, k: number, n: number) {
  const w = rand(k * n, 1 / Math.sqrt(k));
  const { q, scale } = quantCols(w, k, n);
  const input = { name: 'x', dims: [m, k] };
  const forms: Record<string, () => Promise<number>> = {};
  await floatForms(forms, w, [k, n], { opType: 'MatMul', inputs: ['x', 'w'], outputs: ['y'] }, input);
  forms.DynamicQuantizeMatMul = await time(
    'dqmm',
    [{ opType: 'DynamicQuantizeMatMul', domain: 'com.microsoft', inputs: ['x', 'wq', 'ws'], outputs: ['y'] }],
    [raw('wq', DataType.INT8, [k, n], q), raw('ws', DataType.FLOAT, [n], scale)],
    input,
    'y',
  );
  // MatMulNBits: B [N, k_blocks, block] uint8 with the implicit zero point 128, scales [N * k_blocks].
  const block = 128;
  const kb = Math.ceil(k / block);
  const nb = new Uint8Array(n * kb * block).fill(128);
  const nbScale = new Float32Array(n * kb);
  for (let c = 0; c < n; c++)
    for (let b = 0; b < kb; b++) {
      let mx = 0;
      for (let r = b * block; r < Math.min(k, (b + 1) * block); r++)
        mx = Math.max(mx, Math.abs(w[r * n + c]));
      const s = mx / 127 || 1;
      nbScale[c * kb + b] = s;
      for (let r = b * block; r < Math.min(k, (b + 1) * block); r++)
        nb[(c * kb + b) * block + (r - b * block)] = Math.round(w[r * n + c] / s) + 128;
    }
  try {
    forms.MatMulNBits8 = await time(
      'nbits',
      [
        {
          opType: 'MatMulNBits',
          domain: 'com.microsoft',
          inputs: ['x', 'b', 's'],
          outputs: ['y'],
          attributes: {
            K: { kind: 'int', value: k },
            N: { kind: 'int', value: n },
            bits: { kind: 'int', value: 8 },
            block_size: { kind: 'int', value: block },
            accuracy_level: { kind: 'int', value: 4 },
          },
        },
      ],
      [raw('b', DataType.UINT8, [n, kb, block], nb), raw('s', DataType.FLOAT, [n * kb], nbScale)],
      input,
      'y',
    );
  } catch (e) {
    console.log(`MatMulNBits 8-bit: not available (${(e as Error).message.split('\n')[0]})`);
  }
  forms.QDQ = await time(
    'qdq',
    [
      {
        opType: 'DequantizeLinear',
        inputs: ['wq', 'ws'],
        outputs: ['wd'],
        attributes: { axis: { kind: 'int', value: 1 } },
      },
      { opType: 'MatMul', inputs: ['x', 'wd'], outputs: ['y'] },
    ],
    [raw('wq', DataType.INT8, [k, n], q), raw('ws', DataType.FLOAT, [n], scale)],
    input,
    'y',
  );
  return forms;
}

async function convCase(b: number, c: number, o: number, hw: number) {
  const k = c * 9;
  const w = rand(o * k, 1 / Math.sqrt(k));
  const scale = new Float32Array(o);
  const qu = new Uint8Array(o * k);
  const qi = new Int8Array(o * k);
  for (let r = 0; r < o; r++) {
    let m = 0;
    for (let i = 0; i < k; i++) m = Math.max(m, Math.abs(w[r * k + i]));
    scale[r] = m / 127 || 1;
    for (let i = 0; i < k; i++) {
      qi[r * k + i] = Math.round(w[r * k + i] / scale[r]);
      qu[r * k + i] = qi[r * k + i] + 128;
    }
  }
  const input = { name: 'x', dims: [b, c, hw, hw] };
  const pads = { kind: 'ints', value: [1, 1, 1, 1] } as const;
  const forms: Record<string, () => Promise<number>> = {};
  await floatForms(
    forms,
    w,
    [o, c, 3, 3],
    { opType: 'Conv', inputs: ['x', 'w'], outputs: ['y'], attributes: { pads } },
    input,
  );
  forms.ConvInteger = await time(
    'convint',
    [
      { opType: 'DynamicQuantizeLinear', inputs: ['x'], outputs: ['xq', 'xs', 'xz'] },
      { opType: 'ConvInteger', inputs: ['xq', 'wq', 'xz', 'wz'], outputs: ['yi'], attributes: { pads } },
      {
        opType: 'Cast',
        inputs: ['yi'],
        outputs: ['yf'],
        attributes: { to: { kind: 'int', value: DataType.FLOAT } },
      },
      { opType: 'Mul', inputs: ['xs', 'ws'], outputs: ['s'] },
      { opType: 'Mul', inputs: ['yf', 's'], outputs: ['y'] },
    ],
    [
      raw('wq', DataType.UINT8, [o, c, 3, 3], qu),
      raw('wz', DataType.UINT8, [], new Uint8Array([128])),
      raw('ws', DataType.FLOAT, [o, 1, 1], scale),
    ],
    input,
    'y',
  );
  // uint8 im2col: quantize once, NHWC, 9 shifted slices concatenated on channels, MatMulIntegerToFloat
  // [B·H·W, 9C] · [9C, O] (prepacked int8 weight, per-column scales), back to NCHW.
  {
    const i64 = (name: string, v: number[]) =>
      raw(name, DataType.INT64, [v.length], BigInt64Array.from(v.map(BigInt)));
    const nodes: NodeDef[] = [
      { opType: 'DynamicQuantizeLinear', inputs: ['x'], outputs: ['xq', 'xs', 'xz'] },
      {
        opType: 'Transpose',
        inputs: ['xq'],
        outputs: ['xt'],
        attributes: { perm: { kind: 'ints', value: [0, 2, 3, 1] } },
      },
      { opType: 'Pad', inputs: ['xt', 'pads', 'xz'], outputs: ['xp'] },
    ];
    const inits: InitializerDef[] = [i64('pads', [0, 1, 1, 0, 0, 1, 1, 0]), i64('axes', [1, 2])];
    const taps: string[] = [];
    for (let dy = 0; dy < 3; dy++)
      for (let dx = 0; dx < 3; dx++) {
        const t = `tap${dy}${dx}`;
        inits.push(i64(`${t}_s`, [dy, dx]), i64(`${t}_e`, [dy + hw, dx + hw]));
        nodes.push({ opType: 'Slice', inputs: ['xp', `${t}_s`, `${t}_e`, 'axes'], outputs: [t] });
        taps.push(t);
      }
    nodes.push({
      opType: 'Concat',
      inputs: taps,
      outputs: ['cat'],
      attributes: { axis: { kind: 'int', value: 3 } },
    });
    nodes.push({
      opType: 'MatMulIntegerToFloat',
      domain: 'com.microsoft',
      inputs: ['cat', 'wcol', 'xs', 'ws1', 'xz'],
      outputs: ['ym'],
    });
    nodes.push({
      opType: 'Transpose',
      inputs: ['ym'],
      outputs: ['y'],
      attributes: { perm: { kind: 'ints', value: [0, 3, 1, 2] } },
    });
    // [9C, O] with row (dy·3 + dx)·C + c, as the slices are concatenated.
    const wcol = new Int8Array(9 * c * o);
    for (let r = 0; r < o; r++)
      for (let ci = 0; ci < c; ci++)
        for (let t = 0; t < 9; t++) wcol[(t * c + ci) * o + r] = qi[r * k + ci * 9 + t];
    inits.push(raw('wcol', DataType.INT8, [9 * c, o], wcol), raw('ws1', DataType.FLOAT, [o], scale));
    forms.Im2colU8 = await time('im2colu8', nodes, inits, input, 'y');
  }
  forms.QDQ = await time(
    'qdq',
    [
      {
        opType: 'DequantizeLinear',
        inputs: ['wq', 'ws'],
        outputs: ['wd'],
        attributes: { axis: { kind: 'int', value: 0 } },
      },
      { opType: 'Conv', inputs: ['x', 'wd'], outputs: ['y'], attributes: { pads } },
    ],
    [raw('wq', DataType.INT8, [o, c, 3, 3], qi), raw('ws', DataType.FLOAT, [o], scale)],
    input,
    'y',
  );
  return forms;
}

async function report(label: string, forms: Record<string, () => Promise<number>>) {
  const times: Record<string, number[]> = {};
  for (let i = 0; i < runs; i++)
    for (const [f, run] of Object.entries(forms)) {
      times[f] = times[f] ?? [];
      times[f].push(await run());
    }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = med(times.f32);
  console.log(`${label} (load ${load()}):`);
  for (const [f, xs] of Object.entries(times)) {
    const s = [...xs].sort((a, b) => a - b);
    console.log(
      `  ${f.padEnd(22)} min ${s[0].toFixed(1)} ms, median ${med(xs).toFixed(1)} ms, max ${s[s.length - 1].toFixed(1)} ms  f32/this ${(base / med(xs)).toFixed(2)}×`,
    );
  }
}

console.log(`onnxruntime ${ort.env.versions.common}, ${threads} threads, ${runs} alternated runs`);
await report('Linear [8192, 320] · [320, 2560] (GEGLU in, 64×64)', await linearCase(8192, 320, 2560));
await report('Linear [8192, 1280] · [1280, 320] (FF out, 64×64)', await linearCase(8192, 1280, 320));
await report('Linear [512, 1280] · [1280, 1280] (8×8 block)', await linearCase(512, 1280, 1280));
await report('Conv 3×3 320→320 on [2, 320, 64, 64]', await convCase(2, 320, 320, 64));
await report('Conv 3×3 640→640 on [2, 640, 32, 32]', await convCase(2, 640, 640, 32));
