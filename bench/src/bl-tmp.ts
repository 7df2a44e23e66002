import autocannon from 'autocannon';
import { startServer, stopServer } from './servers/spawn.js';

const WIDTH = 256;
const VALUES = Array.from({ length: WIDTH }, (_, i) => ((i * 37) % 101) / 101 - 0.5);
const H = JSON.stringify({
  inputs: [
    { name: 'input', shape: [1, WIDTH], datatype: 'FP32', parameters: { binary_data_size: WIDTH * 4 } },
  ],
  outputs: [{ name: 'output', parameters: { binary_data: true } }],
});
const body = Buffer.concat([Buffer.from(H), Buffer.from(Float32Array.from(VALUES).buffer)]);
const s = await startServer(['--import', 'tsx', 'src/servers/batching-service.ts'], ['taskset', '-c', '1']);
const api = process.argv[2] ?? 'mlp';
const r = await autocannon({
  url: `${s.url}/v2/models/${api}/infer`,
  method: 'POST',
  headers: {
    'content-type': 'application/octet-stream',
    'inference-header-content-length': String(Buffer.byteLength(H)),
  },
  body,
  connections: 64,
  duration: Number(process.argv[3] ?? 8),
});
console.log(api, 'rps', r.requests.average, 'non2xx', r.non2xx);
await stopServer(s.child);
