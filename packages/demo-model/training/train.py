"""Trains the demo text-to-image model on the pictures training/export-dataset.ts rendered.

The latent space is fixed, not learned: a picture's 16×16×4 latent is the mean colour (R, G, B) and the
shape's coverage of each 4×4 pixel cell, all in [-1, 1]. That splits training into two independent jobs
that can run side by side, each bounded by wall-clock seconds (a shared 2-core machine):
  vae   the AutoencoderKL: the decoder learns latent → sharp 64×64 picture, the encoder learns picture →
        latent (for img2img);
  unet  the text encoder and UNet together on the fixed latents (v-prediction, 10 % empty prompts for
        classifier-free guidance, EMA weights).
Every --ckpt-every seconds each job exports its (EMA) weights into the diffusers folder --out, so a run
stopped early still leaves the best weights so far. Fixed seeds; losses go to training/loss-*.csv.

Run (from packages/demo-model), the two jobs at once:
  nice -n 10 /usr/bin/python3 training/train.py vae --out training/.cache/model
  nice -n 10 /usr/bin/python3 training/train.py unet --out training/.cache/model
A stopped job continues with --resume (weights, EMA and step from training/.cache/<job>.pt; a fresh optimiser);
with --steps N the learning rate decays (cosine, to 5 %) over the steps up to N, after --warmup steps.
The README's "How it was trained" lists the exact commands of the shipped weights.
"""

import argparse
import json
import math
import os

# One thread per job, and OpenMP threads that sleep instead of spinning: on a shared, oversubscribed
# machine two spinning threads made a UNet step 13× more expensive in CPU time than one thread.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import shutil
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from configs import model_configs  # noqa: E402
from modules import AutoencoderKL, ClipTextModel, UNet2DConditionModel  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".cache")
VOCAB_SIZE = 49408


def write_safetensors(path, tensors, dtype):
    """safetensors writer: names sorted, JSON header padded with spaces to a multiple of 8."""
    header = {}
    blobs = []
    offset = 0
    np_dtype = {"F16": np.float16, "F32": np.float32}[dtype]
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name].detach().cpu().float().numpy().astype(np_dtype))
        b = a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(path + ".tmp", path)


def export_folder(out, cfgs, vae, text, unet, ids_used, dtype):
    """A diffusers folder Tiffin's loader reads: configs, tokenizer files, safetensors weights."""
    os.makedirs(out, exist_ok=True)

    def js(rel, value):
        p = os.path.join(out, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(json.dumps(value, indent=2) + "\n")

    js("model_index.json", cfgs["model_index"])
    js("scheduler/scheduler_config.json", cfgs["scheduler"])
    js("text_encoder/config.json", cfgs["text_encoder"])
    js("unet/config.json", cfgs["unet"])
    js("vae/config.json", cfgs["vae"])
    tok_src = os.path.join(HERE, "..", "model", "tokenizer")
    tok_dst = os.path.join(out, "tokenizer")
    if os.path.abspath(tok_src) != os.path.abspath(tok_dst):
        shutil.copytree(tok_src, tok_dst, dirs_exist_ok=True)
    if vae is not None:
        write_safetensors(os.path.join(out, "vae", "diffusion_pytorch_model.safetensors"), vae.state_dict(), dtype)
    if unet is not None:
        write_safetensors(os.path.join(out, "unet", "diffusion_pytorch_model.safetensors"), unet.state_dict(), dtype)
    if text is not None:
        sd = dict(text.state_dict())
        compact = sd.pop("text_model.embeddings.token_embedding.weight")
        full = torch.zeros(VOCAB_SIZE, compact.shape[1])
        full[torch.tensor(ids_used)] = compact
        sd["text_model.embeddings.token_embedding.weight"] = full
        write_safetensors(os.path.join(out, "text_encoder", "model.safetensors"), sd, dtype)


def load_dataset():
    images = np.fromfile(os.path.join(CACHE, "images.u8"), dtype=np.uint8).reshape(-1, 64, 64, 3)
    coverage = np.fromfile(os.path.join(CACHE, "coverage.u8"), dtype=np.uint8).reshape(-1, 1, 64, 64)
    tokens = np.fromfile(os.path.join(CACHE, "tokens.i32"), dtype=np.int32).reshape(-1, 77)
    with open(os.path.join(CACHE, "empty-tokens.json")) as f:
        empty = np.array(json.load(f), dtype=np.int32)
    return images, coverage, tokens, empty


def to_pixels(u8):
    return torch.from_numpy(u8).permute(0, 3, 1, 2).float() / 127.5 - 1.0


def fixed_latents(images, coverage):
    """The latent of each picture (before scaling): mean colour and coverage of each 4×4 cell, in [-1, 1]."""
    rgb = F.avg_pool2d(to_pixels(images), 4)
    cov = F.avg_pool2d(torch.from_numpy(coverage).float() / 127.5 - 1.0, 4)
    return torch.cat([rgb, cov], dim=1)


def scaling_factor(latents):
    return round(float(1.0 / latents.std()), 5)


class Ema:
    def __init__(self, modules, decay):
        self.decay = decay
        self.shadow = [{k: v.detach().clone() for k, v in m.state_dict().items()} for m in modules]
        self.modules = modules
        self.steps = 0

    def update(self):
        self.steps += 1
        d = min(self.decay, (1 + self.steps) / (10 + self.steps))
        with torch.no_grad():
            for m, sh in zip(self.modules, self.shadow):
                for k, v in m.state_dict().items():
                    if v.dtype.is_floating_point:
                        sh[k].mul_(d).add_(v.detach(), alpha=1 - d)

    def copy_to(self, targets):
        for t, sh in zip(targets, self.shadow):
            t.load_state_dict(sh)


def train_vae(args, cfgs, images, coverage, latents, ids_used):
    torch.manual_seed(1)
    vae = AutoencoderKL(cfgs["vae"])
    opt = torch.optim.AdamW(vae.parameters(), lr=args.vae_lr, weight_decay=0.0)
    ema = Ema([vae], args.ema)
    ema_vae = AutoencoderKL(cfgs["vae"])
    if args.init:
        # Fine-tune a finished folder's VAE (its EMA weights) instead of starting from scratch.
        vae.load_state_dict(read_safetensors(os.path.join(args.init, "vae", "diffusion_pytorch_model.safetensors")))
        ema.shadow = [{k: v.detach().clone() for k, v in vae.state_dict().items()}]
        print(f"initialised from {args.init}/vae", flush=True)
    # Each picture's shape area, for --area-weight: a small shape's pixels are few, and without it they weigh
    # little in the loss though the evaluator reads their outline like a large one's.
    area = coverage.reshape(len(coverage), -1).sum(axis=1).astype(np.float64) / 255.0
    area_ref = float(np.median(area))
    rng = np.random.default_rng(1)
    step = 0
    start = 0
    resumed_seconds = 0.0
    if args.resume:
        # Continue a stopped run: weights, EMA and step count from its checkpoint; the loss log is appended.
        ck = torch.load(state_path(args, "vae"))
        vae.load_state_dict(ck["vae"])
        ema.shadow = ck["ema"]
        step = start = ema.steps = ck["step"]
        resumed_seconds = ck.get("seconds") or last_logged_seconds(loss_path(args, "vae"))
        rng = np.random.default_rng(1 + step)
        print(f"resumed at step {step}", flush=True)
    t0 = time.time()
    last_ckpt = t0
    with open(loss_path(args, "vae"), "a" if args.resume else "w") as log:
        if not args.resume:
            log.write("step,seconds,decoder_loss,encoder_loss\n")
        while True:
            elapsed = time.time() - t0
            done = elapsed >= args.seconds or (args.steps > 0 and step >= args.steps)
            if done or time.time() - last_ckpt >= args.ckpt_every:
                ema.copy_to([ema_vae])
                export_folder(args.out, cfgs, ema_vae, None, None, ids_used, args.dtype)
                torch.save(
                    {"vae": vae.state_dict(), "ema": ema.shadow, "step": step, "seconds": resumed_seconds + elapsed},
                    state_path(args, "vae"),
                )
                print(f"vae checkpoint at step {step}, {elapsed:.0f}s", flush=True)
                last_ckpt = time.time()
            if done:
                return
            for g in opt.param_groups:
                g["lr"] = learning_rate(args, step, args.vae_lr, start, elapsed)
            idx = rng.integers(0, len(images), args.batch)
            x = to_pixels(images[idx])
            z = latents[idx]
            z_in = z
            if args.latent_noise > 0:
                # The UNet's latents are near, not at, the exact ones: half of the batch decodes a perturbed
                # latent (Gaussian, σ uniform up to --latent-noise in latent units) and must still draw the
                # clean picture, so the decoder snaps a blurred outline back to one of the shapes.
                n = len(idx)
                sigma = args.latent_noise * torch.rand(n, 1, 1, 1) * (torch.rand(n, 1, 1, 1) < 0.5).float()
                z_in = z + sigma * torch.randn_like(z)
            y = vae.decode(z_in)
            # The shape's pixels weigh 1 + --shape-weight (a small shape is 6 % of the picture, and its colour
            # and outline are what the evaluator reads).
            w = 1.0 + args.shape_weight * torch.from_numpy(coverage[idx]).float() / 255.0
            if args.area_weight > 0:
                # Up to --area-weight times more for the shape's pixels of pictures whose shape is smaller than
                # the median one (in proportion to how much smaller).
                boost = np.clip(area_ref / np.maximum(area[idx], 1.0), 1.0, args.area_weight)
                w = 1.0 + (w - 1.0) * torch.from_numpy(boost).float().view(-1, 1, 1, 1)
            err = y - x
            dec = ((err**2 * w).mean() + 0.5 * (err.abs() * w).mean()) / w.mean()
            mean, logvar = vae.encode(x)
            # The encoder reproduces the fixed latent, with a small spread (img2img samples from it).
            enc = F.mse_loss(mean, z) + 0.01 * F.mse_loss(logvar, torch.full_like(logvar, -8.0))
            loss = dec + enc
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            ema.update()
            step += 1
            if step % 10 == 0:
                log.write(f"{step},{resumed_seconds + time.time() - t0:.1f},{dec.item():.6f},{enc.item():.6f}\n")
                log.flush()
            if step % 20 == 0:
                print(f"vae step {step} t={time.time() - t0:.0f}s dec={dec.item():.5f} enc={enc.item():.5f}", flush=True)


def loss_path(args, job):
    """The job's loss log: --loss-csv, else training/loss-<job>.csv (the shipped run's curve)."""
    return args.loss_csv or os.path.join(HERE, f"loss-{job}.csv")


def state_path(args, job):
    """The job's resumable checkpoint: --state, else training/.cache/<job>.pt."""
    return args.state or os.path.join(CACHE, f"{job}.pt")


def last_logged_seconds(path):
    """Training seconds of the last line of a loss log (checkpoints before --resume existed lack them)."""
    with open(path) as f:
        rows = [line.split(",") for line in f.read().splitlines()[1:] if line]
    return float(rows[-1][1]) if rows else 0.0


def alphas_cumprod(cfg):
    betas = torch.linspace(cfg["beta_start"] ** 0.5, cfg["beta_end"] ** 0.5, cfg["num_train_timesteps"]) ** 2
    return torch.cumprod(1.0 - betas, dim=0)


def learning_rate(args, step, peak, start=0, elapsed=0.0):
    """Linear warm-up to `peak`, then (with --steps) a cosine decay to 5 % of it at the last step; a resumed
    run (from step `start`) decays over its own steps. With --decay-by-seconds the decay follows whichever
    of --steps and --seconds is nearer its end, so a run on a slower (shared) machine still finishes its
    schedule inside its wall-clock budget."""
    warm = min(1.0, (step - start + 1) / args.warmup) if args.warmup > 0 else 1.0
    if args.steps <= 0:
        return peak * warm
    progress = min(1.0, (step - start) / max(1, args.steps - start))
    if args.decay_by_seconds:
        progress = max(progress, min(1.0, elapsed / args.seconds))
    return peak * warm * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * progress)))


def train_unet(args, cfgs, latents, tokens, empty, remap, ids_used):
    torch.manual_seed(2)
    text = ClipTextModel(cfgs["text_encoder"], len(ids_used))
    unet = UNet2DConditionModel(cfgs["unet"])
    n_text = sum(q.numel() for q in text.parameters())
    n_unet = sum(q.numel() for q in unet.parameters())
    print(f"parameters: text {n_text} (compact vocabulary), unet {n_unet}", flush=True)
    params = list(text.parameters()) + list(unet.parameters())
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    ema = Ema([text, unet], args.ema)
    ema_text = ClipTextModel(cfgs["text_encoder"], len(ids_used))
    ema_unet = UNet2DConditionModel(cfgs["unet"])
    ac = alphas_cumprod(cfgs["scheduler"])
    T = len(ac)
    tok = torch.from_numpy(remap[tokens])
    empty_c = torch.from_numpy(remap[empty])
    rng = np.random.default_rng(2)
    step = 0
    resumed_seconds = 0.0
    start = 0
    if args.resume:
        # Continue a stopped run: weights, EMA and step count from its checkpoint; the loss log is appended.
        ck = torch.load(state_path(args, "unet"))
        text.load_state_dict(ck["text"])
        unet.load_state_dict(ck["unet"])
        ema.shadow = ck["ema"]
        step = ema.steps = ck["step"]
        resumed_seconds = ck.get("seconds") or last_logged_seconds(loss_path(args, "unet"))
        start = step
        rng = np.random.default_rng(2 + step)
        print(f"resumed at step {step}", flush=True)
    t0 = time.time()
    last_ckpt = t0
    with open(loss_path(args, "unet"), "a" if args.resume else "w") as log:
        if not args.resume:
            log.write("step,seconds,loss\n")
        while True:
            elapsed = time.time() - t0
            done = elapsed >= args.seconds or (args.steps > 0 and step >= args.steps)
            if done or time.time() - last_ckpt >= args.ckpt_every:
                ema.copy_to([ema_text, ema_unet])
                export_folder(args.out, cfgs, None, ema_text, ema_unet, ids_used, args.dtype)
                torch.save(
                    {
                        "text": text.state_dict(),
                        "unet": unet.state_dict(),
                        "ema": ema.shadow,
                        "step": step,
                        "seconds": resumed_seconds + elapsed,
                    },
                    state_path(args, "unet"),
                )
                print(f"unet checkpoint at step {step}, {elapsed:.0f}s", flush=True)
                last_ckpt = time.time()
            if done:
                return
            for g in opt.param_groups:
                g["lr"] = learning_rate(args, step, args.lr, start, elapsed)
            idx = torch.from_numpy(rng.integers(0, len(latents), args.batch))
            x0 = latents[idx]
            ids = tok[idx].clone()
            drop = torch.from_numpy(rng.random(args.batch) < 0.1)
            ids[drop] = empty_c
            # A share (--high-noise) of the timesteps comes from the noisier half, where the picture's layout
            # (colour, place, shape) is decided from the prompt; the rest is uniform over all timesteps.
            t = rng.integers(0, T, args.batch)
            high = rng.random(args.batch) < args.high_noise
            t[high] = rng.integers(T // 2, T, int(high.sum()))
            t = torch.from_numpy(t)
            noise = torch.randn_like(x0)
            a = ac[t].sqrt()[:, None, None, None]
            s = (1 - ac[t]).sqrt()[:, None, None, None]
            xt = a * x0 + s * noise
            target = a * noise - s * x0  # v-prediction
            pred = unet(xt, t, text(ids))
            # The coverage channel (the 4th) carries the shape's outline, the attribute the RGB means blur
            # most; --coverage-weight gives its error that much more weight.
            sq = (pred - target) ** 2
            if args.coverage_weight != 1.0:
                sq = torch.cat([sq[:, :3], args.coverage_weight * sq[:, 3:]], dim=1)
            loss = sq.mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            ema.update()
            step += 1
            if step % 10 == 0:
                log.write(f"{step},{resumed_seconds + time.time() - t0:.1f},{loss.item():.6f}\n")
                log.flush()
            if step % 20 == 0:
                print(f"unet step {step} t={time.time() - t0:.0f}s loss={loss.item():.5f}", flush=True)


def read_safetensors(path):
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8 : 8 + n])
    np_dtype = {"F16": np.float16, "F32": np.float32}
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        s, e = v["data_offsets"]
        a = np.frombuffer(b[8 + n + s : 8 + n + e], dtype=np_dtype[v["dtype"]]).astype(np.float32)
        out[name] = torch.from_numpy(a.reshape(v["shape"]))
    return out


def decode_check(args, images, latents):
    """Decodes the exact latents of 240 training pictures (every 41st) with the VAE of folder --out, for
    training/read-decoded.ts: what the decoder alone allows the evaluator to read back."""
    with open(os.path.join(args.out, "vae", "config.json")) as f:
        cfg = json.load(f)
    vae = AutoencoderKL(cfg)
    vae.load_state_dict(read_safetensors(os.path.join(args.out, "vae", "diffusion_pytorch_model.safetensors")))
    idx = list(range(0, len(images), 41))[:240]
    with torch.no_grad():
        y = vae.decode(latents[idx])
    u8 = ((y.clamp(-1, 1) + 1) * 127.5).round().byte().permute(0, 2, 3, 1).contiguous().numpy()
    u8.tofile(os.path.join(CACHE, "decoded.u8"))
    with open(os.path.join(CACHE, "decoded.json"), "w") as f:
        json.dump(idx, f)
    print(f"decoded {len(idx)} pictures into {CACHE}/decoded.u8", flush=True)


def parity(args):
    """Compares the torch modules with Tiffin's outputs written by training/parity.ts for folder --out
    (--parity-json): the prompt's embeddings, one UNet prediction and one VAE decode."""
    with open(args.parity_json) as f:
        d = json.load(f)

    def cfg(component):
        with open(os.path.join(args.out, component, "config.json")) as f:
            return json.load(f)

    text = ClipTextModel(cfg("text_encoder"), VOCAB_SIZE)
    text.load_state_dict(read_safetensors(os.path.join(args.out, "text_encoder", "model.safetensors")))
    unet = UNet2DConditionModel(cfg("unet"))
    unet.load_state_dict(read_safetensors(os.path.join(args.out, "unet", "diffusion_pytorch_model.safetensors")))
    vae = AutoencoderKL(cfg("vae"))
    vae.load_state_dict(read_safetensors(os.path.join(args.out, "vae", "diffusion_pytorch_model.safetensors")))
    with torch.no_grad():
        ctx = text(torch.tensor([d["ids"]]))
        x = torch.tensor(d["sample"]).reshape(1, 16, 16, 4).permute(0, 3, 1, 2)
        u = unet(x, torch.tensor([500]), ctx).permute(0, 2, 3, 1).reshape(-1)
        v = vae.decode(x).permute(0, 2, 3, 1).reshape(-1)
    for name, a, b in (("text encoder", ctx.reshape(-1), d["context"]), ("unet", u, d["unet"]), ("vae decoder", v, d["vae"])):
        diff = float((a - torch.tensor(b)).abs().max())
        print(f"{name}: max |torch - Tiffin| {diff:.2e} (values up to {float(a.abs().max()):.2f})", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("job", choices=["vae", "unet", "decode-check", "parity"])
    p.add_argument("--out", default=os.path.join(CACHE, "model"))
    p.add_argument("--seconds", type=float, default=2700, help="stop after this many seconds of this run")
    p.add_argument("--steps", type=int, default=0, help="stop at this step; the lr decays to it (0: constant lr)")
    p.add_argument("--warmup", type=int, default=0, help="linear lr warm-up over this many steps")
    p.add_argument("--ckpt-every", type=float, default=240)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--vae-lr", type=float, default=2e-3)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--shape-weight", type=float, default=4.0, help="extra weight of the shape's pixels (vae)")
    p.add_argument("--init", help="vae: start from this diffusers folder's VAE weights (fine-tuning)")
    p.add_argument("--area-weight", type=float, default=0.0, help="vae: most extra weight of a small shape's pixels")
    p.add_argument("--latent-noise", type=float, default=0.0, help="vae: largest σ of the noise added to half the decoder's latents")
    p.add_argument("--coverage-weight", type=float, default=1.0, help="unet: weight of the coverage channel's error")
    p.add_argument("--high-noise", type=float, default=0.0, help="share of timesteps drawn from the noisier half (unet)")
    p.add_argument("--ema", type=float, default=0.995)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dtype", default="F16")
    p.add_argument("--decay-by-seconds", action="store_true", help="the lr schedule also ends at --seconds")
    p.add_argument("--parity-json", help="parity: the file training/parity.ts wrote")
    p.add_argument("--loss-csv", help="loss log (default training/loss-<job>.csv); trials beside each other need their own")
    p.add_argument("--state", help="resumable checkpoint (default training/.cache/<job>.pt)")
    p.add_argument("--resume", action="store_true", help="continue from the --state checkpoint")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if args.job == "parity":
        return parity(args)
    cfgs = model_configs()
    images, coverage, tokens, empty = load_dataset()
    ids_used = sorted(set(np.unique(tokens).tolist()) | set(empty.tolist()))
    remap = np.zeros(VOCAB_SIZE, dtype=np.int64)
    remap[ids_used] = np.arange(len(ids_used))
    latents = fixed_latents(images, coverage)
    cfgs["vae"]["scaling_factor"] = scaling_factor(latents)
    print(f"{len(images)} pictures, {len(ids_used)} distinct tokens, scaling_factor {cfgs['vae']['scaling_factor']}", flush=True)
    if args.job == "decode-check":
        decode_check(args, images, latents)
    elif args.job == "vae":
        train_vae(args, cfgs, images, coverage, latents, ids_used)
    else:
        train_unet(args, cfgs, latents * cfgs["vae"]["scaling_factor"], tokens, empty, remap, ids_used)


if __name__ == "__main__":
    main()
