import { type RequestOptions, request } from 'node:http';

/** One request over node:http (cheaper than fetch, so the server's cost shows): the status and the answer's text. */
export function httpCall(
  url: string,
  options: RequestOptions,
  body?: string | Buffer,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
