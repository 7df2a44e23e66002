"""The reference scripts' shared harness: the deterministic inputs of docs/spec/diffusion.md §11.3 (bit-identical to
src/weights/deterministic.ts) and the fixture encoding. Imports numpy and torch only, so scripts that do not load
transformers can use it."""
import json

import numpy as np
import torch


# --- §11.3 deterministic numbers (bit-identical to src/weights/deterministic.ts) ---
def fnv1a32(name):
    h = 0x811C9DC5
    for b in name.encode("utf-8"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def det_uniform(name, n):
    i = np.arange(n, dtype=np.uint64)
    x = (np.uint64(fnv1a32(name)) + i * np.uint64(0x9E3779B9)) & np.uint64(0xFFFFFFFF)
    m = np.uint64(0xFFFFFFFF)
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x7FEB352D)) & m
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x846CA68B)) & m
    x ^= x >> np.uint64(16)
    return x.astype(np.float64) / 2.0**32 * 2 - 1


def det_input(name, shape, scale=1.0):
    u = det_uniform(name, int(np.prod(shape)))
    return torch.from_numpy((u * np.sqrt(3) * scale).astype(np.float32).reshape(shape))


def full(t):
    a = np.asarray(t.detach().numpy() if torch.is_tensor(t) else t, dtype=np.float32)
    return {"shape": list(a.shape), "data": [round(float(v), 7) for v in a.reshape(-1)]}


def write_fixture(fx, out_path):
    """The fixture as compact JSON (two runs write identical files)."""
    with open(out_path, "w") as f:
        json.dump(fx, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {out_path}")
