// Calls the running service (npm start) from TypeScript: npx tsx client.ts "a prompt"
import { writeFile } from 'node:fs/promises';
import { createClient } from '@tiffin/client';

const client = createClient({ baseUrl: process.env.TIFFIN_URL ?? 'http://127.0.0.1:3000' });
const prompt = process.argv[2] ?? 'a large red circle in the centre on a white background';
const image = (await client.$call('text2img', {
  prompt,
  num_inference_steps: 20,
  guidance_scale: 1.5,
})) as Blob;
await writeFile('picture.jpg', new Uint8Array(await image.arrayBuffer()));
console.log(`picture.jpg: ${image.size > 0 ? 'written' : 'empty'}`);
