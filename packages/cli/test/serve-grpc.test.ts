import { join } from 'node:path';
import type { ResponseMessage } from '@tiffin/core';
import { afterEach, describe, expect, it } from 'vitest';
import { partialGrpcMessage } from '../../core/test/grpc/partial-message.js';
import { CLI_DIR, CliProcess } from './cli-process.js';
import { freePort, inferenceV2Client, nativeClient } from './grpc-clients.js';

const FIXTURE = join(CLI_DIR, 'test', 'fixtures', 'grpc-service.ts');
let proc: CliProcess | undefined;
afterEach(async () => {
  if (proc && proc.child.exitCode === null) {
    proc.child.kill('SIGTERM');
    await proc.exited;
  }
  proc = undefined;
});

describe('tiffin serve --grpc', () => {
  it('serves the same API over HTTP and gRPC, and exits 0 on SIGTERM', async () => {
    const grpcPort = await freePort();
    proc = new CliProcess(['serve', FIXTURE, '--port', '0', '--grpc', '--grpc-port', String(grpcPort)]);
    const url = await proc.readyUrl();
    await proc.waitFor((r) => r.msg === 'gRPC ready');
    const viaHttp = await fetch(`${url}/yo`, { method: 'POST', body: 'Bob' });
    expect(await viaHttp.text()).toBe('yo Bob');
    const client = nativeClient(grpcPort);
    const res = await new Promise<ResponseMessage>((resolve, reject) =>
      client.Call({ api_name: 'yo', text: { value: 'Ann' } }, (err, r) => (err ? reject(err) : resolve(r))),
    );
    client.close();
    expect(res.text?.value).toBe('yo Ann');
    // The Open Inference Protocol's gRPC service on the same port: the Text API is a BYTES model.
    const v2 = inferenceV2Client(grpcPort);
    const inferred = await new Promise<string>((resolve, reject) =>
      v2.ModelInfer(
        {
          model_name: 'yo',
          inputs: [
            {
              name: 'input',
              datatype: 'BYTES',
              shape: [1],
              contents: { bytes_contents: [Buffer.from('Zoë')] },
            },
          ],
        },
        (err, r) =>
          err ? reject(err) : resolve(r.outputs[0]!.contents.bytes_contents![0]!.toString('utf8')),
      ),
    );
    v2.close();
    expect(inferred).toBe('yo Zoë');
    proc.child.kill('SIGTERM');
    expect((await proc.exited).code).toBe(0);
  });

  it('takes the body budget and the gRPC message time limit from its flags', async () => {
    const grpcPort = await freePort();
    proc = new CliProcess([
      'serve',
      FIXTURE,
      '--port',
      '0',
      '--grpc',
      '--grpc-port',
      String(grpcPort),
      '--grpc-message-timeout',
      '1',
      '--max-buffered-bytes',
      '65536',
    ]);
    const url = await proc.readyUrl();
    await proc.waitFor((r) => r.msg === 'gRPC ready');
    // A gRPC message that stops short of its declared length holds 60 KiB of the budget until the limit ends it.
    const partial = partialGrpcMessage(`127.0.0.1:${grpcPort}`, 1 << 20, 60 * 1024);
    // While it holds: an HTTP body that does not fit the rest of the budget is refused, a small one is answered.
    let refused = await fetch(`${url}/yo`, { method: 'POST', body: 'x'.repeat(8 * 1024) });
    for (let i = 0; i < 50 && refused.status === 200; i++) {
      await new Promise((r) => setTimeout(r, 20));
      refused = await fetch(`${url}/yo`, { method: 'POST', body: 'x'.repeat(8 * 1024) });
    }
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { code: string }).code).toBe('BODY_BUDGET_FULL');
    expect(await (await fetch(`${url}/yo`, { method: 'POST', body: 'Bob' })).text()).toBe('yo Bob');
    expect(await partial.status).toBe('4'); // DEADLINE_EXCEEDED, after --grpc-message-timeout
    expect((await fetch(`${url}/yo`, { method: 'POST', body: 'x'.repeat(8 * 1024) })).status).toBe(200);
  });

  it('--no-http without --grpc is a one-line error', async () => {
    proc = new CliProcess(['serve', FIXTURE, '--no-http']);
    const { code } = await proc.exited;
    expect(code).not.toBe(0);
    expect(proc.stderr.trim().split('\n')).toHaveLength(1);
    expect(proc.stderr).toMatch(/--no-http needs --grpc/);
  });
});
