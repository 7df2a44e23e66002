"""The torch side of bench/one-step-image.ts and bench/lcm-image.ts: diffusers' own UNet2DConditionModel, scheduler
and AutoencoderTiny (diffusers 0.27.2 source tree on PYTHONPATH, as reference/README.md describes) with the same random
weights and TAESD folder, f32, Debian's torch on N threads, batch 1 without guidance. `one-step`: EulerDiscreteScheduler
with trailing spacing, 1 UNet call (what SD-Turbo and SDXL-Turbo run); `lcm`: LCMScheduler, 4 UNet calls. An SDXL-shaped
UNet (addition_embed_type text_time) gets pooled text embeddings and its six time ids. The CLIP text encoders are left
out (transformers is not installed here): Tiffin's figure for them is printed apart.

It loads once, then answers each `run` line on stdin with one JSON line (seconds per part and the process's peak RSS
in GB), so the TypeScript bench alternates its own image and this one in one run.

Usage: PYTHONPATH=<site> /usr/bin/python3 bench/torch_image.py <one-step|lcm> <folder> <taesd folder> [threads] [size]
"""

import json
import resource
import sys
import time

import torch
from diffusers import AutoencoderTiny, EulerDiscreteScheduler, LCMScheduler, UNet2DConditionModel
from safetensors.torch import load_file


def load(model_cls, config_path, weights_path):
    with open(config_path) as f:
        config = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    model = model_cls.from_config(config).eval()
    state = {k: v.float() for k, v in load_file(weights_path).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected, unexpected[:3]
    del state
    return model, missing


def peak_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def main():
    mode, folder, taesd = sys.argv[1], sys.argv[2], sys.argv[3]
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    size = int(sys.argv[5]) if len(sys.argv) > 5 else 512
    side = size // 8
    torch.set_num_threads(threads)
    unet, missing = load(UNet2DConditionModel, f"{folder}/unet/config.json", f"{folder}/unet/diffusion_pytorch_model.safetensors")
    assert not missing, missing[:3]
    tiny, missing = load(AutoencoderTiny, f"{taesd}/config.json", f"{taesd}/diffusion_pytorch_model.safetensors")
    assert all(k.startswith("encoder.") for k in missing)
    with open(f"{folder}/scheduler/scheduler_config.json") as f:
        scheduler_config = json.load(f)
    if mode == "one-step":
        scheduler, steps = EulerDiscreteScheduler.from_config({**scheduler_config, "timestep_spacing": "trailing"}), 1
    elif mode == "lcm":
        scheduler, steps = LCMScheduler.from_config(scheduler_config), 4
    else:
        raise SystemExit(f"unknown mode {mode}")
    cfg = unet.config
    torch.manual_seed(0)
    noise = torch.randn(1, cfg.in_channels, side, side)
    context = torch.randn(1, 77, cfg.cross_attention_dim)
    added = None
    if cfg.addition_embed_type == "text_time":
        pooled = cfg.projection_class_embeddings_input_dim - 6 * cfg.addition_time_embed_dim
        added = {"text_embeds": torch.randn(1, pooled), "time_ids": torch.tensor([[size, size, 0, 0, size, size]], dtype=torch.float32)}
    with torch.no_grad():
        unet(noise, 999, encoder_hidden_states=context, added_cond_kwargs=added)  # warm-up
        print(json.dumps({"ready": torch.__version__, "threads": threads, "mode": mode, "peak_rss_gb": peak_gb()}), flush=True)
        for line in sys.stdin:
            if line.strip() != "run":
                break
            t0 = time.perf_counter()
            unet_s = 0.0
            scheduler.set_timesteps(steps)
            latents = noise * scheduler.init_noise_sigma
            for t in scheduler.timesteps:
                x_in = scheduler.scale_model_input(latents, t)
                t1 = time.perf_counter()
                pred = unet(x_in, t, encoder_hidden_states=context, added_cond_kwargs=added).sample
                unet_s += time.perf_counter() - t1
                step = scheduler.step(pred, t, latents)
                latents = step.prev_sample  # LCM: noise re-added between steps, the denoised sample at the last
            t3 = time.perf_counter()
            image = tiny.decode(latents).sample
            (image / 2 + 0.5).clamp(0, 1).mul(255).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()
            t4 = time.perf_counter()
            print(json.dumps({
                "image": t4 - t0, "unet": unet_s, "unet_calls": steps, "tiny": t4 - t3,
                "scheduling": (t3 - t0) - unet_s, "peak_rss_gb": peak_gb(),
            }), flush=True)


if __name__ == "__main__":
    main()
