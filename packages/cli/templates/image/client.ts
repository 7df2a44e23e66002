// Calls the running service (npm start) from TypeScript: npx tsx client.ts [image]
import { readFile } from 'node:fs/promises';
import { createClient } from '@tiffin/client';
import type svc from './service.js';

const client = createClient<typeof svc>({ baseUrl: process.env.TIFFIN_URL ?? 'http://127.0.0.1:3000' });
const file = process.argv[2] ?? 'example.bmp';
const types: Record<string, string> = {
  bmp: 'image/bmp',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};
const image = new Blob([await readFile(file)], {
  type: types[file.split('.').pop()!.toLowerCase()] ?? 'image/png',
});
console.log(await client.describe(image));
