import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbTaskStore } from '@tiffin/core/tasks';
import { afterAll } from 'vitest';
import { describeJobs } from './jobs-suite.js';

// The jobs on disk, as `tiffin serve` keeps them by default (`--tasks disk`).
const dir = mkdtempSync(join(tmpdir(), 'tiffin-sd-jobs-lmdb-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
describeJobs('LmdbTaskStore', () => LmdbTaskStore.open({ dir, maxTasks: 64, resultTtl: 600 }));
