"""diffusers 0.27.2's AutoencoderTiny decode on the tests' tiny autoencoder folder (packages/diffusion/src/tiny/
write-tiny-autoencoder.ts) → test/fixtures/sd-reference/tiny_autoencoder.json.

Usage: PYTHONPATH=<site> /usr/bin/python3 reference/tiny_autoencoder_reference.py <folder> <out.json>
The model is diffusers' own `AutoencoderTiny`, built from the folder's config.json; the folder holds the decoder's
weights only, so the encoder's are reported missing and left as built (decoding never reads them).
"""

import json
import sys

import numpy as np
import torch

import diffusers
from diffusers import AutoencoderTiny
from safetensors.torch import load_file

# Deterministic inputs and the fixture encoding, shared by the reference scripts.
from det_harness import det_input, full


def main():
    folder, out_path = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    with open(f"{folder}/config.json") as f:
        config = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    model = AutoencoderTiny(**config).eval()
    missing, unexpected = model.load_state_dict(
        load_file(f"{folder}/diffusion_pytorch_model.safetensors"), strict=False
    )
    assert not unexpected, unexpected
    assert all(k.startswith("encoder.") for k in missing), missing
    fx = {"diffusers_version": diffusers.__version__, "torch_version": torch.__version__, "cases": []}
    # Scale 2: values past ±3 go through the decoder's tanh clamp too.
    for name, shape, scale in [("vae_tiny/latents", [1, 4, 16, 16], 2.0), ("vae_tiny/latents_b2", [2, 4, 8, 12], 1.0)]:
        latents = det_input(name, shape, scale)
        with torch.no_grad():
            # As a pipeline decodes: latents / scaling_factor (1.0 for TAESD), then the image processor's [0, 1].
            image = model.decode(latents / model.config.scaling_factor, return_dict=False)[0]
        uint8 = ((image / 2 + 0.5).clamp(0, 1) * 255).round().to(torch.uint8)
        fx["cases"].append(
            {
                "latents": {"name": name, "shape": shape, "scale": scale},
                "decode_full": full(image),
                "image_uint8": [int(v) for v in uint8.reshape(-1)],
            }
        )
    with open(out_path, "w") as f:
        json.dump(fx, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
