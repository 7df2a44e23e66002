// Calls the running service (npm start) from TypeScript: npx tsx client.ts
import { createClient } from '@tiffin/client';
import type svc from './service.js';

const client = createClient<typeof svc>({ baseUrl: process.env.TIFFIN_URL ?? 'http://127.0.0.1:3000' });
console.log(await client.shout('hello'));
console.log(await client.row_sums([[1, 2, 3, 4]]));
