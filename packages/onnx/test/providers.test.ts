import { availableParallelism } from 'node:os';
import { ConfigError } from '@tiffin/core/internal';
import { afterEach, describe, expect, it } from 'vitest';
import { parseOrtProviders, parseOrtThreads, resolveRuntime } from '../src/index.js';

afterEach(() => {
  delete process.env.TIFFIN_ORT_THREADS;
  delete process.env.TIFFIN_ORT_PROVIDERS;
});

describe('onnxruntime threads and providers from flags and env', () => {
  it('parses provider lists in preference order, case-insensitively', () => {
    expect(parseOrtProviders('cuda,cpu')).toEqual(['cuda', 'cpu']);
    expect(parseOrtProviders(' TensorRT , CUDA ')).toEqual(['tensorrt', 'cuda']);
  });

  it('refuses malformed, unknown and repeated providers, naming the origin', () => {
    const bad: [string, RegExp][] = [
      ['', /expected provider names separated by commas/],
      ['cuda,,cpu', /expected provider names separated by commas/],
      [',', /expected provider names/],
      ['cdua', /unknown execution provider "cdua" \(onnxruntime-node providers: cpu, cuda, tensorrt, /],
      ['metal', /unknown execution provider "metal"/],
      ['cúda', /unknown execution provider "cúda"/],
      ['x'.repeat(10_000), /unknown execution provider/],
      ['cuda,CUDA', /execution provider cuda is named twice/],
    ];
    for (const [value, message] of bad) {
      expect(() => parseOrtProviders(value)).toThrow(ConfigError);
      expect(() => parseOrtProviders(value)).toThrow(message);
    }
    expect(() => parseOrtProviders('gpu', '--ort-providers')).toThrow(/^--ort-providers: unknown/);
  });

  it('parses thread counts as positive integers only', () => {
    expect(parseOrtThreads('4')).toBe(4);
    expect(parseOrtThreads(' 2 ')).toBe(2);
    for (const value of ['0', '-1', '1.5', '2x', '', '1e3', '0x10', '99999999999999999999', '٣']) {
      expect(() => parseOrtThreads(value, 'TIFFIN_ORT_THREADS'), value).toThrow(
        /^TIFFIN_ORT_THREADS: expected a positive integer number of threads/,
      );
    }
  });

  it('a bad $TIFFIN_ORT_THREADS / $TIFFIN_ORT_PROVIDERS is an error, not a silent default', async () => {
    process.env.TIFFIN_ORT_THREADS = 'many';
    await expect(resolveRuntime({})).rejects.toThrow(/^TIFFIN_ORT_THREADS: expected a positive integer/);
    delete process.env.TIFFIN_ORT_THREADS;
    process.env.TIFFIN_ORT_PROVIDERS = 'cuda;cpu';
    await expect(resolveRuntime({})).rejects.toThrow(
      /^TIFFIN_ORT_PROVIDERS: unknown execution provider "cuda;cpu"/,
    );
    // Options win over the env, so a flag replaces a bad env value.
    expect((await resolveRuntime({ executionProviders: ['cpu'], intraOpThreads: 1 })).threads).toBe(1);
    delete process.env.TIFFIN_ORT_PROVIDERS;
    expect((await resolveRuntime({})).threads).toBe(availableParallelism());
  });
});

describe('execution providers', () => {
  it('CPU by default with every core; a named GPU provider without its library is skipped with why', async () => {
    const def = await resolveRuntime({});
    expect(def).toEqual({ providers: ['cpu'], threads: availableParallelism(), skipped: [] });
    const gpu = await resolveRuntime({ executionProviders: ['cuda', 'metal'], intraOpThreads: 2 });
    expect(gpu.providers).toEqual(['cpu']);
    expect(gpu.threads).toBe(2);
    expect(gpu.skipped[0]).toMatch(
      /^cuda: its provider library is not installed .*ONNXRUNTIME_NODE_INSTALL=cuda12/,
    );
    expect(gpu.skipped[1]).toMatch(/^metal: onnxruntime-node has no metal provider/);
    process.env.TIFFIN_ORT_THREADS = '3';
    process.env.TIFFIN_ORT_PROVIDERS = 'CUDA';
    try {
      const env = await resolveRuntime({});
      expect([env.threads, env.providers, env.skipped.length]).toEqual([3, ['cpu'], 1]);
    } finally {
      delete process.env.TIFFIN_ORT_THREADS;
      delete process.env.TIFFIN_ORT_PROVIDERS;
    }
    await expect(resolveRuntime({ intraOpThreads: 0 })).rejects.toThrow(/positive integer/);
  });
});
