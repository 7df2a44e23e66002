"""The torch side of bench/lcm-image.ts: diffusers' own UNet2DConditionModel and AutoencoderTiny (diffusers 0.27.2
source tree on PYTHONPATH, as reference/README.md describes) with the same SD1.5-shaped random weights and TAESD
folder, 4 UNet calls (batch 1, 64×64 latents, no guidance) and one tiny decode to 512², Debian's torch on N threads.
The CLIP text encoder is left out (transformers is not installed here): Tiffin's figure for it is printed apart.

Usage: PYTHONPATH=<site> /usr/bin/python3 bench/torch_lcm_image.py <sd15 folder> <taesd folder> [threads] [runs]
"""

import json
import statistics
import sys
import time

import torch
from diffusers import AutoencoderTiny, UNet2DConditionModel
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
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    torch.set_num_threads(threads)
    unet, missing = load(UNet2DConditionModel, f"{folder}/unet/config.json", f"{folder}/unet/diffusion_pytorch_model.safetensors")
    assert not missing, missing[:3]
    tiny, missing = load(AutoencoderTiny, f"{taesd}/config.json", f"{taesd}/diffusion_pytorch_model.safetensors")
    assert all(k.startswith("encoder.") for k in missing)
    torch.manual_seed(0)
    sample = torch.randn(1, 4, 64, 64)
    context = torch.randn(1, 77, 768)
    unet_times, tiny_times, image_times = [], [], []
    with torch.no_grad():
        unet(sample, 999, encoder_hidden_states=context)  # warm-up
        for r in range(runs):
            t0 = time.perf_counter()
            latents = sample
            for t in (999, 759, 499, 259):
                t1 = time.perf_counter()
                latents = unet(latents, t, encoder_hidden_states=context).sample
                unet_times.append(time.perf_counter() - t1)
            t2 = time.perf_counter()
            tiny.decode(latents)
            tiny_times.append(time.perf_counter() - t2)
            image_times.append(time.perf_counter() - t0)
            print(f"torch run {r + 1}: 4 UNet calls + tiny decode {image_times[-1]:.2f} s", flush=True)
    med = statistics.median
    print(
        f"torch {torch.__version__}, {threads} threads: image without text encoder {med(image_times):.2f} s median "
        f"({min(image_times):.2f}-{max(image_times):.2f}); UNet call {med(unet_times):.2f} s; tiny decode {med(tiny_times):.2f} s"
    )


if __name__ == "__main__":
    main()
