"""SD 1.x / 2.x / SDXL UNet forward in plain torch (functional ops, diffusers' math and weight names), for the
onnxruntime benches: the same random weights and inputs, timed step by step on request. SDXL: transformer depth per
block and the `text_time` added embedding (pooled text embeds + six time ids).

Protocol (stdin/stdout, one line each): the bench writes `run`, this prints the step's seconds;
`dump <path>` writes the last output (float32, NCHW) to <path>; `rss` prints the peak RSS in bytes. Usage:
  /usr/bin/python3 torch_unet_step.py <unet folder> <threads> <inputs.bin> [batch] [latent size]
inputs.bin (float32): sample NCHW, context [batch, 77, cross dim], for text_time also text embeds [batch, P] and
time ids [batch, 6], then the timestep.
"""
import json
import math
import resource
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def load(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name, e in header.items():
            if name == "__metadata__":
                continue
            f.seek(base + e["data_offsets"][0])
            raw = f.read(e["data_offsets"][1] - e["data_offsets"][0])
            dt = {"F32": np.float32, "F16": np.float16}[e["dtype"]]
            out[name] = torch.from_numpy(np.frombuffer(raw, dtype=dt).astype(np.float32).reshape(e["shape"]))
        return out


def main():
    folder, threads, inputs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    torch.set_num_threads(threads)
    cfg = json.load(open(f"{folder}/config.json"))
    W = load(f"{folder}/diffusion_pytorch_model.safetensors")
    C = cfg["block_out_channels"]
    N, n, G, eps = len(C), cfg["layers_per_block"], cfg["norm_num_groups"], cfg["norm_eps"]
    heads = cfg["attention_head_dim"]
    heads = heads if isinstance(heads, list) else [heads] * N
    lp = cfg.get("use_linear_projection", False)
    depth = cfg.get("transformer_layers_per_block", 1)
    depth = depth if isinstance(depth, list) else [depth] * N
    text_time = cfg.get("addition_embed_type") == "text_time"

    def lin(x, p, bias=True):
        return F.linear(x, W[p + ".weight"], W.get(p + ".bias") if bias else None)

    def conv(x, p, stride=1, pad=1):
        return F.conv2d(x, W[p + ".weight"], W[p + ".bias"], stride=stride, padding=pad)

    def gn(x, p, e):
        return F.group_norm(x, G, W[p + ".weight"], W[p + ".bias"], e)

    def resnet(x, p, temb):
        h = conv(F.silu(gn(x, p + ".norm1", eps)), p + ".conv1")
        h = h + lin(temb, p + ".time_emb_proj")[:, :, None, None]
        h = conv(F.silu(gn(h, p + ".norm2", eps)), p + ".conv2")
        s = conv(x, p + ".conv_shortcut", pad=0) if p + ".conv_shortcut.weight" in W else x
        return s + h

    def attn(x, ctx, p, nh):
        q, k, v = lin(x, p + ".to_q", False), lin(ctx, p + ".to_k", False), lin(ctx, p + ".to_v", False)
        b, lq, d = q.shape
        dh = d // nh
        sp = lambda t: t.reshape(b, -1, nh, dh).transpose(1, 2).reshape(b * nh, -1, dh)
        s = torch.baddbmm(torch.empty(b * nh, lq, k.shape[1]), sp(q), sp(k).transpose(1, 2), beta=0, alpha=dh**-0.5)
        o = torch.bmm(s.softmax(-1), sp(v)).reshape(b, nh, lq, dh).transpose(1, 2).reshape(b, lq, d)
        return lin(o, p + ".to_out.0")

    def transformer(x, p, ctx, nh, layers):
        b, c, hh, ww = x.shape
        h = gn(x, p + ".norm", 1e-6)
        if lp:
            h = lin(h.permute(0, 2, 3, 1).reshape(b, hh * ww, c), p + ".proj_in")
        else:
            h = conv(h, p + ".proj_in", pad=0).permute(0, 2, 3, 1).reshape(b, hh * ww, c)
        for k in range(layers):
            bp = f"{p}.transformer_blocks.{k}"
            ln = lambda t, q: F.layer_norm(t, (c,), W[f"{bp}.{q}.weight"], W[f"{bp}.{q}.bias"], 1e-5)
            h = h + attn(ln(h, "norm1"), ln(h, "norm1"), bp + ".attn1", nh)
            h = h + attn(ln(h, "norm2"), ctx, bp + ".attn2", nh)
            a, g = lin(ln(h, "norm3"), bp + ".ff.net.0.proj").chunk(2, dim=-1)
            h = h + lin(a * F.gelu(g), bp + ".ff.net.2")
        if lp:
            h = lin(h, p + ".proj_out").reshape(b, hh, ww, c).permute(0, 3, 1, 2)
        else:
            h = conv(h.reshape(b, hh, ww, c).permute(0, 3, 1, 2), p + ".proj_out", pad=0)
        return h + x

    def sinusoidal(x, dim):  # flip_sin_to_cos, freq_shift 0
        half = dim // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
        arg = x[:, None] * freqs[None]
        return torch.cat([torch.cos(arg), torch.sin(arg)], -1)

    def forward(sample, t, ctx, text_embeds=None, time_ids=None):
        emb = lin(F.silu(lin(sinusoidal(torch.tensor([t]), C[0]), "time_embedding.linear_1")), "time_embedding.linear_2")
        if text_time:
            ids = sinusoidal(time_ids.reshape(-1), cfg["addition_time_embed_dim"]).reshape(time_ids.shape[0], -1)
            aug = torch.cat([text_embeds, ids], -1)
            emb = emb + lin(F.silu(lin(aug, "add_embedding.linear_1")), "add_embedding.linear_2")
        temb = F.silu(emb)
        h = conv(sample, "conv_in")
        skips = [h]
        for i in range(N):
            cross = cfg["down_block_types"][i] == "CrossAttnDownBlock2D"
            for j in range(n):
                h = resnet(h, f"down_blocks.{i}.resnets.{j}", temb)
                if cross:
                    h = transformer(h, f"down_blocks.{i}.attentions.{j}", ctx, heads[i], depth[i])
                skips.append(h)
            if i < N - 1:
                h = conv(h, f"down_blocks.{i}.downsamplers.0.conv", stride=2)
                skips.append(h)
        h = resnet(h, "mid_block.resnets.0", temb)
        h = transformer(h, "mid_block.attentions.0", ctx, heads[-1], depth[-1])
        h = resnet(h, "mid_block.resnets.1", temb)
        rh, rd = heads[::-1], depth[::-1]
        for i in range(N):
            cross = cfg["up_block_types"][i] == "CrossAttnUpBlock2D"
            for j in range(n + 1):
                h = resnet(torch.cat([h, skips.pop()], 1), f"up_blocks.{i}.resnets.{j}", temb)
                if cross:
                    h = transformer(h, f"up_blocks.{i}.attentions.{j}", ctx, rh[i], rd[i])
            if i < N - 1:
                h = conv(F.interpolate(h, scale_factor=2.0, mode="nearest"), f"up_blocks.{i}.upsamplers.0.conv")
        return conv(F.silu(gn(h, "conv_norm_out", eps)), "conv_out")

    raw = np.fromfile(inputs, dtype=np.float32)
    b = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    hw = int(sys.argv[5]) if len(sys.argv) > 5 else 64
    ctx_len = 77
    take = lambda at, n: (torch.from_numpy(raw[at:at + n].copy()), at + n)
    sample, at = take(0, b * 4 * hw * hw)
    sample = sample.reshape(b, 4, hw, hw)
    ctx, at = take(at, b * ctx_len * cfg["cross_attention_dim"])
    ctx = ctx.reshape(b, ctx_len, -1)
    extra = {}
    if text_time:
        p = cfg["projection_class_embeddings_input_dim"] - 6 * cfg["addition_time_embed_dim"]
        text_embeds, at = take(at, b * p)
        time_ids, at = take(at, b * 6)
        extra = {"text_embeds": text_embeds.reshape(b, p), "time_ids": time_ids.reshape(b, 6)}
    assert at == raw.size - 1, f"inputs.bin has {raw.size} values, expected {at + 1}"
    t = float(raw[-1])
    out = None
    print("ready", flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "run":
            with torch.no_grad():
                t0 = time.perf_counter()
                out = forward(sample, t, ctx, **extra)
                print(f"{time.perf_counter() - t0:.3f}", flush=True)
        elif cmd[0] == "dump":
            out.numpy().astype(np.float32).tofile(cmd[1])
            print("ok", flush=True)
        elif cmd[0] == "rss":
            print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, flush=True)


main()
