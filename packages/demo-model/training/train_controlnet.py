"""Trains a Canny ControlNet for the demo model (the shipped `model/`: UNet and text encoder frozen).

The ControlNet is diffusers' `ControlNetModel.from_unet` of the demo UNet (its encoder half copied, zero
convolutions), with a small conditioning embedding (8/16/32 channels, two stride-2 convolutions: 64×64 map →
16×16 latent). Conditioning: `cv2.Canny(rgb, 100, 200)` of the 64×64 training picture as a 3-channel 0/1 map,
the map Tiffin's `module: "canny"` computes from the same picture (OpenCV's Canny, A1111's thresholds).

So that the map, not the prompt, decides shape, position and size, half of the training prompts are the caption
of another picture with the same colour and background (its shape, size and place differ): the prompt keeps the
colour and the background, the edges give the rest. 10 % empty prompts (classifier-free guidance applies the
ControlNet to both halves), v-prediction, half of the timesteps from the noisier half, the coverage channel's
error weighing 3×, as the UNet's run. Fixed seeds; loss per step in training/loss-controlnet.csv; the EMA
weights exported (float16) to --out every --ckpt-every seconds.

Run (from packages/demo-model, after `npx tsx --conditions=source training/export-dataset.ts`):
  nice -n 10 env HF_HUB_OFFLINE=1 PYTHONPATH=<site> /usr/bin/python3 training/train_controlnet.py \
    --out training/.cache/controlnet-canny --threads 2 --seconds 1500
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cv2  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from train import (  # noqa: E402
    Ema,
    alphas_cumprod,
    fixed_latents,
    learning_rate,
    load_dataset,
    read_safetensors,
    write_safetensors,
)
from modules import ClipTextModel  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "model")
VOCAB_SIZE = 49408


def canny_maps(images):
    """The conditioning image of each picture: OpenCV's Canny on the RGB picture (100/200), 0/1, N×3×64×64."""
    edges = np.stack([cv2.Canny(np.ascontiguousarray(im), 100, 200) for im in images])
    return torch.from_numpy(edges).float().div(255.0)[:, None].expand(-1, 3, -1, -1).contiguous()


def caption_groups(captions):
    """Indices of the pictures sharing each picture's colour and background (from the caption's words)."""
    keys = []
    for c in captions:
        w = c.split()
        keys.append((w[2], w[-2]))  # "a <size> <colour> <shape> ... on a <background> background"
    by_key = {}
    for i, k in enumerate(keys):
        by_key.setdefault(k, []).append(i)
    return [np.array(by_key[k]) for k in keys]


def load_frozen(threads):
    from diffusers import ControlNetModel, UNet2DConditionModel

    with open(os.path.join(MODEL, "unet", "config.json")) as f:
        ucfg = json.load(f)
    unet = UNet2DConditionModel.from_config(ucfg)
    unet.load_state_dict(read_safetensors(os.path.join(MODEL, "unet", "diffusion_pytorch_model.safetensors")))
    unet.requires_grad_(False).eval()
    with open(os.path.join(MODEL, "text_encoder", "config.json")) as f:
        tcfg = json.load(f)
    text = ClipTextModel(tcfg, VOCAB_SIZE)
    text.load_state_dict(read_safetensors(os.path.join(MODEL, "text_encoder", "model.safetensors")))
    text.requires_grad_(False).eval()
    with open(os.path.join(MODEL, "vae", "config.json")) as f:
        scaling = json.load(f)["scaling_factor"]
    return unet, text, scaling, ControlNetModel


def export(out, controlnet, dtype):
    os.makedirs(out, exist_ok=True)
    cfg = {k: v for k, v in dict(controlnet.config).items() if not k.startswith("_")}
    cfg = {"_class_name": "ControlNetModel", "_diffusers_version": "0.27.2", **cfg}
    with open(os.path.join(out, "config.json"), "w") as f:
        f.write(json.dumps(cfg, indent=2) + "\n")
    write_safetensors(os.path.join(out, "diffusion_pytorch_model.safetensors"), controlnet.state_dict(), dtype)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.path.join(HERE, ".cache", "controlnet-canny"))
    p.add_argument("--seconds", type=float, default=1500)
    p.add_argument("--steps", type=int, default=4000)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--ema", type=float, default=0.99)
    p.add_argument("--swap", type=float, default=0.5, help="share of prompts taken from another picture")
    p.add_argument("--high-noise", type=float, default=0.5)
    p.add_argument("--coverage-weight", type=float, default=3.0)
    p.add_argument("--ckpt-every", type=float, default=300)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--dtype", default="F16")
    p.add_argument("--loss-csv", default=os.path.join(HERE, "loss-controlnet.csv"))
    args = p.parse_args()
    args.decay_by_seconds = True
    torch.set_num_threads(args.threads)
    torch.manual_seed(3)

    unet, text, scaling, ControlNetModel = load_frozen(args.threads)
    controlnet = ControlNetModel.from_unet(unet, conditioning_embedding_out_channels=(8, 16, 32))
    controlnet.train()
    n_params = sum(q.numel() for q in controlnet.parameters())
    images, coverage, tokens, empty = load_dataset()
    with open(os.path.join(HERE, ".cache", "captions.json")) as f:
        groups = caption_groups(json.load(f))
    latents = fixed_latents(images, coverage) * scaling
    cond = canny_maps(images)
    # The frozen text encoder's output for each distinct prompt, computed once.
    rows, inverse = np.unique(np.concatenate([tokens, empty[None]]), axis=0, return_inverse=True)
    with torch.no_grad():
        ctx = torch.cat([text(torch.from_numpy(rows[i : i + 256]).long()) for i in range(0, len(rows), 256)])
    prompt_of = torch.from_numpy(inverse[:-1])
    empty_ctx = ctx[inverse[-1]]
    print(f"{len(images)} pictures, {len(rows)} prompts, controlnet {n_params} parameters", flush=True)

    opt = torch.optim.AdamW(controlnet.parameters(), lr=args.lr, weight_decay=0.0)
    ema_net = ControlNetModel.from_unet(unet, conditioning_embedding_out_channels=(8, 16, 32))
    ema = Ema([controlnet], args.ema)
    ac = alphas_cumprod({"beta_start": 0.00085, "beta_end": 0.012, "num_train_timesteps": 1000})
    T = len(ac)
    rng = np.random.default_rng(3)
    t0 = time.time()
    last_ckpt = t0
    step = 0
    with open(args.loss_csv, "w") as log:
        log.write("step,seconds,loss\n")
        while True:
            elapsed = time.time() - t0
            done = elapsed >= args.seconds or step >= args.steps
            if done or time.time() - last_ckpt >= args.ckpt_every:
                ema.copy_to([ema_net])
                export(args.out, ema_net, args.dtype)
                print(f"controlnet checkpoint at step {step}, {elapsed:.0f}s", flush=True)
                last_ckpt = time.time()
            if done:
                return
            for g in opt.param_groups:
                g["lr"] = learning_rate(args, step, args.lr, 0, elapsed)
            idx = rng.integers(0, len(images), args.batch)
            # The prompt: the picture's caption, another picture's of the same colour and background, or empty.
            src = np.array([rng.choice(groups[i]) if rng.random() < args.swap else i for i in idx])
            c = ctx[prompt_of[torch.from_numpy(src)]].clone()
            drop = torch.from_numpy(rng.random(args.batch) < 0.1)
            c[drop] = empty_ctx
            t = rng.integers(0, T, args.batch)
            high = rng.random(args.batch) < args.high_noise
            t[high] = rng.integers(T // 2, T, int(high.sum()))
            t = torch.from_numpy(t)
            x0 = latents[idx]
            noise = torch.randn_like(x0)
            a = ac[t].sqrt()[:, None, None, None]
            s = (1 - ac[t]).sqrt()[:, None, None, None]
            xt = a * x0 + s * noise
            target = a * noise - s * x0  # v-prediction
            down, mid = controlnet(xt, t, c, cond[idx], return_dict=False)
            pred = unet(xt, t, c, down_block_additional_residuals=down, mid_block_additional_residual=mid).sample
            sq = (pred - target) ** 2
            sq = torch.cat([sq[:, :3], args.coverage_weight * sq[:, 3:]], dim=1)
            loss = sq.mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(controlnet.parameters(), 1.0)
            opt.step()
            ema.update()
            step += 1
            log.write(f"{step},{time.time() - t0:.1f},{loss.item():.6f}\n")
            log.flush()
            if step % 20 == 0:
                print(f"controlnet step {step} t={time.time() - t0:.0f}s loss={loss.item():.5f}", flush=True)


if __name__ == "__main__":
    main()
