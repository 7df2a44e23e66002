"""Small torch modules whose parameter names and maths follow the diffusers / transformers layout that
Tiffin's loader reads (docs: the diffusion spec, sections 4-6): CLIPTextModel, UNet2DConditionModel and
AutoencoderKL. Only what the demo model uses is here (no dropout, no LoRA, no legacy names)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ResnetBlock2D(nn.Module):
    def __init__(self, cin, cout, temb, groups, eps):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin, eps=eps)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        if temb:
            self.time_emb_proj = nn.Linear(temb, cout)
        self.norm2 = nn.GroupNorm(groups, cout, eps=eps)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        if cin != cout:
            self.conv_shortcut = nn.Conv2d(cin, cout, 1)

    def forward(self, x, temb_act=None):
        h = self.conv1(F.silu(self.norm1(x)))
        if temb_act is not None:
            h = h + self.time_emb_proj(temb_act)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        s = self.conv_shortcut(x) if hasattr(self, "conv_shortcut") else x
        return s + h


class Attention(nn.Module):
    """diffusers Attention: separate q/k/v projections, `to_out.0`; heads of size dim / heads."""

    def __init__(self, dim, context_dim, heads, bias):
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(dim, dim, bias=bias)
        self.to_k = nn.Linear(context_dim, dim, bias=bias)
        self.to_v = nn.Linear(context_dim, dim, bias=bias)
        self.to_out = nn.ModuleList([nn.Linear(dim, dim)])

    def forward(self, x, context=None):
        src = x if context is None else context
        b, n, c = x.shape
        h = self.heads
        dh = c // h
        q = self.to_q(x).view(b, n, h, dh).transpose(1, 2)
        k = self.to_k(src).view(b, src.shape[1], h, dh).transpose(1, 2)
        v = self.to_v(src).view(b, src.shape[1], h, dh).transpose(1, 2)
        a = torch.softmax(q @ k.transpose(-1, -2) * dh**-0.5, dim=-1) @ v
        return self.to_out[0](a.transpose(1, 2).reshape(b, n, c))


class GEGLU(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, 8 * dim)

    def forward(self, x):
        a, g = self.proj(x).chunk(2, dim=-1)
        return a * F.gelu(g)


class FeedForward(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.ModuleList([GEGLU(dim), nn.Identity(), nn.Linear(4 * dim, dim)])

    def forward(self, x):
        for m in self.net:
            x = m(x)
        return x


class BasicTransformerBlock(nn.Module):
    def __init__(self, dim, context_dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn1 = Attention(dim, dim, heads, bias=False)
        self.norm2 = nn.LayerNorm(dim)
        self.attn2 = Attention(dim, context_dim, heads, bias=False)
        self.norm3 = nn.LayerNorm(dim)
        self.ff = FeedForward(dim)

    def forward(self, x, context):
        x = x + self.attn1(self.norm1(x))
        x = x + self.attn2(self.norm2(x), context)
        return x + self.ff(self.norm3(x))


class Transformer2DModel(nn.Module):
    """With use_linear_projection: proj_in / proj_out are Linear layers on the token sequence."""

    def __init__(self, c, context_dim, heads, groups):
        super().__init__()
        self.norm = nn.GroupNorm(groups, c, eps=1e-6)
        self.proj_in = nn.Linear(c, c)
        self.transformer_blocks = nn.ModuleList([BasicTransformerBlock(c, context_dim, heads)])
        self.proj_out = nn.Linear(c, c)

    def forward(self, x, context):
        b, c, hh, ww = x.shape
        h = self.norm(x).permute(0, 2, 3, 1).reshape(b, hh * ww, c)
        h = self.proj_in(h)
        for blk in self.transformer_blocks:
            h = blk(h, context)
        h = self.proj_out(h).reshape(b, hh, ww, c).permute(0, 3, 1, 2)
        return h + x


class Conv(nn.Module):
    """Holder for a `.conv` child (downsamplers.0.conv, upsamplers.0.conv)."""

    def __init__(self, c, stride):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, stride=stride, padding=1 if stride == 1 else 0)


class Block(nn.Module):
    pass


def timestep_embedding(t, dim):
    """flip_sin_to_cos = true, freq_shift = 0 (spec 5.3)."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
    arg = t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(arg), torch.sin(arg)], dim=-1)


class UNet2DConditionModel(nn.Module):
    """All blocks cross-attention (CrossAttnDownBlock2D / CrossAttnUpBlock2D), linear projections."""

    def __init__(self, cfg):
        super().__init__()
        C = cfg["block_out_channels"]
        heads = cfg["attention_head_dim"]
        n = cfg["layers_per_block"]
        G = cfg["norm_num_groups"]
        eps = cfg["norm_eps"]
        X = cfg["cross_attention_dim"]
        N = len(C)
        temb = 4 * C[0]
        self.c0 = C[0]
        self.n = n
        self.conv_in = nn.Conv2d(cfg["in_channels"], C[0], 3, padding=1)
        self.time_embedding = Block()
        self.time_embedding.linear_1 = nn.Linear(C[0], temb)
        self.time_embedding.linear_2 = nn.Linear(temb, temb)
        self.down_blocks = nn.ModuleList()
        for i in range(N):
            blk = Block()
            blk.resnets = nn.ModuleList(
                [ResnetBlock2D(C[max(i - 1, 0)] if j == 0 else C[i], C[i], temb, G, eps) for j in range(n)]
            )
            if cfg["down_block_types"][i] == "CrossAttnDownBlock2D":
                blk.attentions = nn.ModuleList([Transformer2DModel(C[i], X, heads[i], G) for _ in range(n)])
            if i < N - 1:
                blk.downsamplers = nn.ModuleList([Conv(C[i], 2)])
            self.down_blocks.append(blk)
        M = C[-1]
        self.mid_block = Block()
        self.mid_block.resnets = nn.ModuleList([ResnetBlock2D(M, M, temb, G, eps) for _ in range(2)])
        self.mid_block.attentions = nn.ModuleList([Transformer2DModel(M, X, heads[-1], G)])
        R = list(reversed(C))
        RH = list(reversed(heads))
        self.up_blocks = nn.ModuleList()
        for i in range(N):
            prev = R[0] if i == 0 else R[i - 1]
            skip_last = R[min(i + 1, N - 1)]
            blk = Block()
            blk.resnets = nn.ModuleList(
                [
                    ResnetBlock2D(
                        (prev if j == 0 else R[i]) + (skip_last if j == n else R[i]), R[i], temb, G, eps
                    )
                    for j in range(n + 1)
                ]
            )
            if cfg["up_block_types"][i] == "CrossAttnUpBlock2D":
                blk.attentions = nn.ModuleList([Transformer2DModel(R[i], X, RH[i], G) for _ in range(n + 1)])
            if i < N - 1:
                blk.upsamplers = nn.ModuleList([Conv(R[i], 1)])
            self.up_blocks.append(blk)
        self.conv_norm_out = nn.GroupNorm(G, C[0], eps=eps)
        self.conv_out = nn.Conv2d(C[0], cfg["out_channels"], 3, padding=1)

    def forward(self, x, t, context):
        emb = timestep_embedding(t, self.c0)
        temb = self.time_embedding.linear_2(F.silu(self.time_embedding.linear_1(emb)))
        ta = F.silu(temb)
        h = self.conv_in(x)
        skips = [h]
        for blk in self.down_blocks:
            for j, r in enumerate(blk.resnets):
                h = r(h, ta)
                if hasattr(blk, "attentions"):
                    h = blk.attentions[j](h, context)
                skips.append(h)
            if hasattr(blk, "downsamplers"):
                # UNet downsampling: stride-2 conv, padding 1 on all sides.
                h = blk.downsamplers[0].conv(F.pad(h, (1, 1, 1, 1)))
                skips.append(h)
        h = self.mid_block.resnets[0](h, ta)
        h = self.mid_block.attentions[0](h, context)
        h = self.mid_block.resnets[1](h, ta)
        for blk in self.up_blocks:
            for j, r in enumerate(blk.resnets):
                h = r(torch.cat([h, skips.pop()], dim=1), ta)
                if hasattr(blk, "attentions"):
                    h = blk.attentions[j](h, context)
            if hasattr(blk, "upsamplers"):
                h = blk.upsamplers[0].conv(F.interpolate(h, scale_factor=2.0, mode="nearest"))
        return self.conv_out(F.silu(self.conv_norm_out(h)))


class VaeAttention(nn.Module):
    def __init__(self, c, groups):
        super().__init__()
        self.group_norm = nn.GroupNorm(groups, c, eps=1e-6)
        self.to_q = nn.Linear(c, c)
        self.to_k = nn.Linear(c, c)
        self.to_v = nn.Linear(c, c)
        self.to_out = nn.ModuleList([nn.Linear(c, c)])

    def forward(self, x):
        b, c, hh, ww = x.shape
        h = self.group_norm(x).permute(0, 2, 3, 1).reshape(b, hh * ww, c)
        q, k, v = self.to_q(h), self.to_k(h), self.to_v(h)
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(c), dim=-1) @ v
        return self.to_out[0](a).reshape(b, hh, ww, c).permute(0, 3, 1, 2) + x


def vae_mid(c, groups):
    m = Block()
    m.resnets = nn.ModuleList([ResnetBlock2D(c, c, None, groups, 1e-6) for _ in range(2)])
    m.attentions = nn.ModuleList([VaeAttention(c, groups)])
    return m


def run_mid(m, h):
    return m.resnets[1](m.attentions[0](m.resnets[0](h)))


class AutoencoderKL(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg["block_out_channels"]
        n = cfg["layers_per_block"]
        G = cfg["norm_num_groups"]
        L = cfg["latent_channels"]
        N = len(C)
        enc = Block()
        enc.conv_in = nn.Conv2d(cfg["in_channels"], C[0], 3, padding=1)
        enc.down_blocks = nn.ModuleList()
        for i in range(N):
            blk = Block()
            blk.resnets = nn.ModuleList(
                [ResnetBlock2D(C[max(i - 1, 0)] if j == 0 else C[i], C[i], None, G, 1e-6) for j in range(n)]
            )
            if i < N - 1:
                blk.downsamplers = nn.ModuleList([Conv(C[i], 2)])
            enc.down_blocks.append(blk)
        enc.mid_block = vae_mid(C[-1], G)
        enc.conv_norm_out = nn.GroupNorm(G, C[-1], eps=1e-6)
        enc.conv_out = nn.Conv2d(C[-1], 2 * L, 3, padding=1)
        self.encoder = enc
        self.quant_conv = nn.Conv2d(2 * L, 2 * L, 1)
        self.post_quant_conv = nn.Conv2d(L, L, 1)
        R = list(reversed(C))
        dec = Block()
        dec.conv_in = nn.Conv2d(L, R[0], 3, padding=1)
        dec.mid_block = vae_mid(R[0], G)
        dec.up_blocks = nn.ModuleList()
        for i in range(N):
            blk = Block()
            blk.resnets = nn.ModuleList(
                [
                    ResnetBlock2D(R[max(i - 1, 0)] if j == 0 else R[i], R[i], None, G, 1e-6)
                    for j in range(n + 1)
                ]
            )
            if i < N - 1:
                blk.upsamplers = nn.ModuleList([Conv(R[i], 1)])
            dec.up_blocks.append(blk)
        dec.conv_norm_out = nn.GroupNorm(G, C[0], eps=1e-6)
        dec.conv_out = nn.Conv2d(C[0], cfg["out_channels"], 3, padding=1)
        self.decoder = dec
        self.L = L

    def encode(self, x):
        e = self.encoder
        h = e.conv_in(x)
        for blk in e.down_blocks:
            for r in blk.resnets:
                h = r(h)
            if hasattr(blk, "downsamplers"):
                # VAE downsampling: zero-pad right and bottom by 1, stride-2 conv without padding.
                h = blk.downsamplers[0].conv(F.pad(h, (0, 1, 0, 1)))
        h = run_mid(e.mid_block, h)
        h = e.conv_out(F.silu(e.conv_norm_out(h)))
        m = self.quant_conv(h)
        mean, logvar = m[:, : self.L], torch.clamp(m[:, self.L :], -30.0, 20.0)
        return mean, logvar

    def decode(self, z):
        d = self.decoder
        h = d.conv_in(self.post_quant_conv(z))
        h = run_mid(d.mid_block, h)
        for blk in d.up_blocks:
            for r in blk.resnets:
                h = r(h)
            if hasattr(blk, "upsamplers"):
                h = blk.upsamplers[0].conv(F.interpolate(h, scale_factor=2.0, mode="nearest"))
        return d.conv_out(F.silu(d.conv_norm_out(h)))


class ClipEncoderLayer(nn.Module):
    def __init__(self, d, inter, heads):
        super().__init__()
        self.heads = heads
        self.layer_norm1 = nn.LayerNorm(d)
        self.self_attn = Block()
        for p in ("q_proj", "k_proj", "v_proj", "out_proj"):
            setattr(self.self_attn, p, nn.Linear(d, d))
        self.layer_norm2 = nn.LayerNorm(d)
        self.mlp = Block()
        self.mlp.fc1 = nn.Linear(d, inter)
        self.mlp.fc2 = nn.Linear(inter, d)

    def forward(self, x, mask):
        b, n, d = x.shape
        h = self.heads
        dh = d // h
        y = self.layer_norm1(x)
        a = self.self_attn
        q = (a.q_proj(y) * dh**-0.5).view(b, n, h, dh).transpose(1, 2)
        k = a.k_proj(y).view(b, n, h, dh).transpose(1, 2)
        v = a.v_proj(y).view(b, n, h, dh).transpose(1, 2)
        o = torch.softmax(q @ k.transpose(-1, -2) + mask, dim=-1) @ v
        x = x + a.out_proj(o.transpose(1, 2).reshape(b, n, d))
        y = self.mlp.fc1(self.layer_norm2(x))
        y = y * torch.sigmoid(1.702 * y)  # quick_gelu
        return x + self.mlp.fc2(y)


class ClipTextModel(nn.Module):
    """CLIPTextModel over a compact vocabulary: `ids_used[k]` is the real token id of row k. Export
    scatters the rows into a full [vocab_size, D] table (other rows zero)."""

    def __init__(self, cfg, n_used):
        super().__init__()
        d = cfg["hidden_size"]
        tm = Block()
        tm.embeddings = Block()
        tm.embeddings.token_embedding = nn.Embedding(n_used, d)
        tm.embeddings.position_embedding = nn.Embedding(cfg["max_position_embeddings"], d)
        tm.encoder = Block()
        tm.encoder.layers = nn.ModuleList(
            [
                ClipEncoderLayer(d, cfg["intermediate_size"], cfg["num_attention_heads"])
                for _ in range(cfg["num_hidden_layers"])
            ]
        )
        tm.final_layer_norm = nn.LayerNorm(d)
        self.text_model = tm
        L = cfg["max_position_embeddings"]
        self.register_buffer("mask", torch.triu(torch.full((L, L), float("-inf")), diagonal=1), persistent=False)
        for m in self.modules():
            if isinstance(m, (nn.Embedding,)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, compact_ids):
        tm = self.text_model
        L = compact_ids.shape[1]
        x = tm.embeddings.token_embedding(compact_ids) + tm.embeddings.position_embedding.weight[:L][None]
        for layer in tm.encoder.layers:
            x = layer(x, self.mask[:L, :L])
        return tm.final_layer_norm(x)
