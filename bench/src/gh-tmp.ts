import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { inferenceClientConstructor } from '@tiffin/core';
import { startServer, stopServer } from './servers/spawn.js';

const cpu = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (+x[11] + +x[12]) / 100;
};
const server = await startServer(
  ['--import', 'tsx', 'src/servers/grpc-echo-service.ts'],
  ['taskset', '-c', '1'],
);
const pid = server.child.pid!;
const address = await (await fetch(`${server.url}/grpc_address`, { method: 'POST', body: '' })).text();
const Client = inferenceClientConstructor();
const clients = Array.from(
  { length: 4 },
  (_, i) => new Client(address, grpc.credentials.createInsecure(), { 'grpc.bench_channel': i }) as any,
);
const VALUES = Array.from({ length: 1000 }, (_, i) => Math.sin(i) * 1000);
const message = {
  api_name: 'echo',
  ndarray: { dtype: 'DTYPE_DOUBLE', shape: [1000], double_values: VALUES },
};
const body = Buffer.from(JSON.stringify(VALUES));
const agent = new Agent({ keepAlive: true, maxSockets: 32 });
const g = (lane: number) =>
  new Promise<void>((res, rej) => clients[lane % 4].Call(message, (e: any) => (e ? rej(e) : res())));
const h = () =>
  new Promise<void>((res, rej) => {
    const r = httpRequest(
      `${server.url}/echo`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (rs) => {
        rs.resume();
        rs.on('end', () => res());
      },
    );
    r.on('error', rej);
    r.end(body);
  });
async function loop(f: (l: number) => Promise<void>, secs: number) {
  let n = 0;
  const end = Date.now() + secs * 1000;
  const c0 = cpu(pid);
  await Promise.all(
    Array.from({ length: 32 }, (_, l) =>
      (async () => {
        while (Date.now() < end) {
          await f(l);
          n++;
        }
      })(),
    ),
  );
  return { n, us: ((cpu(pid) - c0) / n) * 1e6 };
}
await loop(h, 2);
await loop(g, 2);
for (let i = 0; i < 3; i++) {
  const a = await loop(h, 4);
  const b = await loop(g, 4);
  console.log(
    `http ${a.n} calls ${a.us.toFixed(0)} us/call | grpc ${b.n} calls ${b.us.toFixed(0)} us/call | cpu ratio http/grpc ${(a.us / b.us).toFixed(3)}`,
  );
}
for (const c of clients) c.close();
agent.destroy();
await stopServer(server.child);
