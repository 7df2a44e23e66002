import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bmpBomb, parquetRleBomb } from '../src/declared-sizes.js';
import { encodeRequest, type RawGrpcClient, rawGrpcClient } from '../src/grpc-raw.js';
import { startTarget, type Target } from '../src/target.js';

/*
 * Small bodies that declare huge sizes, against a real server in its own process (the fuzz target: HTTP and gRPC), each
 * sent while /livez is probed: the answer is a 4xx, the process lives, its memory stays near its idle size,
 * and /livez keeps answering. The figures (latency, RSS) are printed; the tests check outcomes, not timings.
 */

let target: Target;
let grpc: RawGrpcClient;
let idleRss = 0;
const figures: string[] = [];

beforeAll(async () => {
  target = await startTarget();
  grpc = rawGrpcClient(target.grpcAddress);
  // Warm up (first requests compile the paths) before the idle size is read.
  await post('/frame', 'application/json', Buffer.from('[{"a":1}]'));
  idleRss = target.rss() ?? 0;
}, 60_000);

afterAll(async () => {
  grpc?.close();
  await target?.stop();
  console.info(`[declared-size figures]\n  ${figures.join('\n  ')}`);
});

const url = (path: string) => `http://127.0.0.1:${target.httpPort}${path}`;

async function post(path: string, contentType: string, body: Buffer): Promise<Response> {
  return fetch(url(path), { method: 'POST', headers: { 'content-type': contentType }, body });
}

/** Run `attack` while /livez is asked every 20 ms; the slowest /livez answer and the peak RSS growth. */
async function underAttack<T>(
  name: string,
  attack: () => Promise<T>,
): Promise<{ result: T; livezMaxMs: number; rssGrowthMb: number }> {
  let running = true;
  let livezMaxMs = 0;
  let peakRss = target.rss() ?? 0;
  let probes = 0;
  const prober = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(url('/livez'));
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      livezMaxMs = Math.max(livezMaxMs, performance.now() - started);
      peakRss = Math.max(peakRss, target.rss() ?? 0);
      probes++;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const started = performance.now();
  const result = await attack();
  const ms = performance.now() - started;
  // At least one probe after the attack, so a process that died or hangs is seen.
  const seen = probes;
  while (probes === seen) await new Promise((resolve) => setTimeout(resolve, 10));
  running = false;
  await prober;
  const rssGrowthMb = (peakRss - idleRss) / 2 ** 20;
  figures.push(
    `${name}: answered in ${ms.toFixed(0)} ms; /livez max ${livezMaxMs.toFixed(1)} ms over ${probes} probes; RSS +${rssGrowthMb.toFixed(0)} MB (idle ${(idleRss / 2 ** 20).toFixed(0)} MB)`,
  );
  expect(target.exit).toBeNull();
  // Memory is not timing: the bound, "within a few hundred MB of its idle size".
  expect(rssGrowthMb).toBeLessThan(300);
  return { result, livezMaxMs, rssGrowthMb };
}

async function errorOf(res: Response): Promise<{ status: number; code: string; error: string }> {
  const body = (await res.json()) as { code: string; error: string };
  return { status: res.status, ...body };
}

describe('small requests that declare huge sizes, against a live server', () => {
  it('1. Parquet: a 184-byte RLE file declaring 60 M rows is a 413, and so is a page that lies about the footer', async () => {
    const bombs = [
      parquetRleBomb({ footerRows: 60_000_000, pageValues: 60_000_000 }),
      parquetRleBomb({ footerRows: 1, pageValues: 60_000_000 }),
      parquetRleBomb({ footerRows: 1_000_000, pageValues: 1_000_000 }),
    ];
    for (const bomb of bombs) expect(bomb.length).toBeLessThan(200);
    // Padded to pass the bytes ratio (16 values a byte): then maxElements (4,194,304 cells) refuses it.
    bombs.push(parquetRleBomb({ footerRows: 5_000_000, pageValues: 5_000_000, padding: 320_000 }));
    const { result } = await underAttack('Parquet RLE bombs (3 × <200 B, 1 × 320 KB)', () =>
      Promise.all(
        bombs.map(async (bomb) => errorOf(await post('/frame', 'application/vnd.apache.parquet', bomb))),
      ),
    );
    for (const answer of result) {
      expect(answer).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
      expect(answer.error).toMatch(/Parquet file declares/);
    }
    // Under application/octet-stream the PAR1 framing makes it Parquet too (what Parquet clients send): the same 413.
    const asBytes = await errorOf(await post('/frame', 'application/octet-stream', bombs[0]!));
    expect(asBytes).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('2. gRPC: an NDArray message with only a shape allocates nothing and is INVALID_ARGUMENT', async () => {
    const { result } = await underAttack('gRPC shape-only NDArray ([134217728], [2147483647])', () =>
      Promise.all(
        [[134_217_728], [2_147_483_647], [65_536, 65_536]].map((shape) =>
          grpc.call(encodeRequest({ api_name: 'nd', ndarray: { shape } })),
        ),
      ),
    );
    for (const answer of result) {
      expect(answer.code).toBe(3); // INVALID_ARGUMENT
      expect(answer.details).toMatch(/no values/);
    }
    // An empty shape still is an empty array.
    expect((await grpc.call(encodeRequest({ api_name: 'nd', ndarray: { shape: [0, 3] } }))).code).toBe(0);
  });

  it('3. 128 sockets that send headers with Content-Length: 100 and no body do not lock the APIs out', async () => {
    const sockets: Socket[] = [];
    try {
      const { result } = await underAttack('128 stalled bodies, then 8 API calls', async () => {
        for (let i = 0; i < 128; i++) {
          const socket = connect(target.httpPort, '127.0.0.1');
          socket.on('error', () => {});
          socket.write(
            'POST /json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n',
          );
          sockets.push(socket);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
        // The fuzz target allows 1024 at once; what matters is that no permit is held by the stalled sockets:
        // the calls are answered at once, not after a timeout.
        return Promise.all(
          Array.from({ length: 8 }, () => post('/json', 'application/json', Buffer.from('[1]'))),
        );
      });
      expect(result.map((r) => r.status)).toEqual(Array(8).fill(200));
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it('5. BMP: 16 RLE8 files of 1,080 bytes declaring 9456×9456, and a width of 0xFFFFFFFF, are 413s', async () => {
    const rle = bmpBomb({ width: 9456, height: 9456, compression: 1 });
    expect(rle.length).toBe(1080);
    const wide = bmpBomb({ width: 0xffffffff, height: 1, compression: 0 });
    const { result } = await underAttack('BMP bombs (16 × 1,080 B RLE8 + 0xFFFFFFFF width)', () =>
      Promise.all(
        [...Array(16).fill(rle), wide].map(async (body: Buffer) =>
          errorOf(await post('/image', 'image/bmp', body)),
        ),
      ),
    );
    for (const answer of result) {
      expect(answer).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
      expect(answer.error).not.toMatch(/ERR_|RangeError|Buffer|Array buffer allocation/);
    }
  });

  it('leaves the server serving with an empty error log', async () => {
    expect((await fetch(url('/livez'))).status).toBe(200);
    expect((await post('/frame', 'application/json', Buffer.from('[{"a":1}]'))).status).toBe(200);
    expect(target.stderr()).toBe('');
  });
});
