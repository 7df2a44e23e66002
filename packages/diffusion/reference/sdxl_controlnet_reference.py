"""Reference numbers for an SDXL ControlNet from Hugging Face diffusers 0.27.2 (dev-only; never a runtime dependency).

The tiny SDXL ControlNet (`writeTinyControlNet(dir, { flavour: 'sdxl', seed: 'a' })`, scripts/make-tiny-controlnet.ts:
the tiny SDXL UNet's encoder half, `addition_embed_type` `text_time`) through diffusers' own `ControlNetModel`, its raw
residuals (conditioning_scale 0.5) for given inputs, as `StableDiffusionXLControlNetPipeline` calls it with
`added_cond_kwargs` (the pipeline imports transformers, not installed here, so the embeddings are given):

- sample det_input("cnxl/sample") [1, 4, 16, 16], timestep 500;
- encoder_hidden_states det_input("cnxl/context") [1, 77, 80];
- text_embeds det_input("cnxl/text_embeds") [1, 40], time_ids [[32, 32, 0, 0, 32, 32]];
- controlnet_cond: picture("control/a", 32, 32) through `VaeImageProcessor` (RGB, / 255, no normalize).

Outputs NCHW. Usage (see README.md beside this file for the environment; transformers is not needed):
  PYTHONPATH=<site> /usr/bin/python3 sdxl_controlnet_reference.py <tiny sdxl controlnet> <out.json>
"""
import sys

import numpy as np
import PIL.Image
import safetensors.torch  # noqa: F401 (diffusers reads weights through `safetensors.torch`)
import torch

import diffusers
from diffusers import ControlNetModel
from diffusers.image_processor import VaeImageProcessor

from det_harness import det_input, det_uniform, full, write_fixture

SIZE = 32


def picture(name, w, h):
    u = det_uniform(name, w * h * 3)
    return np.clip(np.floor((u + 1) * 127.5), 0, 255).astype(np.uint8).reshape(h, w, 3)


def residuals(net, scale):
    processor = VaeImageProcessor(vae_scale_factor=2, do_convert_rgb=True, do_normalize=False)
    image = processor.preprocess(PIL.Image.fromarray(picture("control/a", SIZE, SIZE)), height=SIZE, width=SIZE)
    image = image.to(dtype=torch.float32)
    pooled = net.config.projection_class_embeddings_input_dim - 6 * net.config.addition_time_embed_dim
    with torch.no_grad():
        d, m = net(
            det_input("cnxl/sample", [1, 4, 16, 16]),
            500,
            encoder_hidden_states=det_input("cnxl/context", [1, 77, net.config.cross_attention_dim]),
            controlnet_cond=image,
            conditioning_scale=scale,
            added_cond_kwargs={
                "text_embeds": det_input("cnxl/text_embeds", [1, pooled]),
                "time_ids": torch.tensor([[SIZE, SIZE, 0, 0, SIZE, SIZE]], dtype=torch.float32),
            },
            return_dict=False,
        )
    return {"conditioning_scale": scale, "down": [full(r) for r in d], "mid": full(m)}


def main():
    net_dir, out_path = sys.argv[1:3]
    torch.set_num_threads(1)
    net = ControlNetModel.from_pretrained(net_dir, torch_dtype=torch.float32).eval()
    fx = {
        "diffusers": diffusers.__version__,
        "torch": torch.__version__,
        "about": __doc__,
        "timestep": 500,
        "time_ids": [SIZE, SIZE, 0, 0, SIZE, SIZE],
        "residuals": residuals(net, 0.5),
    }
    write_fixture(fx, out_path)


if __name__ == "__main__":
    main()
