"""The torch side of bench/one-step-image.ts: diffusers' own UNet2DConditionModel, EulerDiscreteScheduler (trailing
spacing, 1 step: what SD-Turbo runs) and AutoencoderTiny (diffusers 0.27.2 source tree on PYTHONPATH, as
reference/README.md describes) with the same SD1.5-shaped random weights and TAESD folder: one UNet call (batch 1,
size/8 latents, no guidance), the scheduler step and one tiny decode (512² unless told), f32, Debian's torch on N threads. The
CLIP text encoder is left out (transformers is not installed here): Tiffin's figure for it is printed apart.

It loads once, then answers each `run` line on stdin with one JSON line (seconds per part), so the TypeScript bench
alternates its own image and this one in one run.

Usage: PYTHONPATH=<site> /usr/bin/python3 bench/torch_one_step_image.py <sd15 folder> <taesd folder> [threads] [size]
"""

import json
import sys
import time

import torch
from diffusers import AutoencoderTiny, EulerDiscreteScheduler, UNet2DConditionModel
from safetensors.torch import load_file


def load(model_cls, config_path, weights_path):
    with open(config_path) as f:
        config = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    model = model_cls.from_config(config).eval()
    state = {k: v.float() for k, v in load_file(weights_path).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected, unexpected[:3]
    return model, missing


def main():
    folder, taesd = sys.argv[1], sys.argv[2]
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    side = (int(sys.argv[4]) if len(sys.argv) > 4 else 512) // 8
    torch.set_num_threads(threads)
    unet, missing = load(UNet2DConditionModel, f"{folder}/unet/config.json", f"{folder}/unet/diffusion_pytorch_model.safetensors")
    assert not missing, missing[:3]
    tiny, missing = load(AutoencoderTiny, f"{taesd}/config.json", f"{taesd}/diffusion_pytorch_model.safetensors")
    assert all(k.startswith("encoder.") for k in missing)
    with open(f"{folder}/scheduler/scheduler_config.json") as f:
        scheduler_config = {**json.load(f), "timestep_spacing": "trailing"}
    scheduler = EulerDiscreteScheduler.from_config(scheduler_config)
    torch.manual_seed(0)
    noise = torch.randn(1, 4, side, side)
    context = torch.randn(1, 77, 768)
    with torch.no_grad():
        unet(noise, 999, encoder_hidden_states=context)  # warm-up
        print(json.dumps({"ready": torch.__version__, "threads": threads}), flush=True)
        for line in sys.stdin:
            if line.strip() != "run":
                break
            t0 = time.perf_counter()
            scheduler.set_timesteps(1)
            latents = noise * scheduler.init_noise_sigma
            t = scheduler.timesteps[0]
            x_in = scheduler.scale_model_input(latents, t)
            t1 = time.perf_counter()
            pred = unet(x_in, t, encoder_hidden_states=context).sample
            t2 = time.perf_counter()
            latents = scheduler.step(pred, t, latents).prev_sample
            t3 = time.perf_counter()
            image = tiny.decode(latents).sample
            (image / 2 + 0.5).clamp(0, 1).mul(255).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()
            t4 = time.perf_counter()
            print(json.dumps({
                "image": t4 - t0, "unet": t2 - t1, "tiny": t4 - t3, "scheduling": (t1 - t0) + (t3 - t2),
            }), flush=True)


if __name__ == "__main__":
    main()
