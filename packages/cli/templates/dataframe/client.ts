// Calls the running service (npm start) from TypeScript: npx tsx client.ts
import { createClient } from '@tiffin/client';
import type svc from './service.js';

const client = createClient<typeof svc>({ baseUrl: process.env.TIFFIN_URL ?? 'http://127.0.0.1:3000' });
console.log(await client.totals([{ item: 'tea', price: 2.5, quantity: 4 }]));
