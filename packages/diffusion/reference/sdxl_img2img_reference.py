"""img2img reference numbers for the tiny SDXL pipeline from diffusers (dev-only; never a runtime dependency).

Runs `StableDiffusionXLImg2ImgPipeline` on the components of the tiny SDXL folder (`requires_aesthetics_score`
false, as for SDXL base) with diffusers' defaults (guidance 5, strength 0.3, no negative prompt: zero negative
embeddings) and the harness's deterministic inputs and noise (docs/spec/diffusion.md §11.3, §13): init image
`det_input("pipe/init_image", [1, 32, 32, 3], 0.25) + 0.5`, VAE sample noise `vae-noise/<k>`, img2img noise
`pipe-noise/<k>`.

Usage (environment: README.md beside this file):
  PYTHONPATH=<site> /usr/bin/python3 sdxl_img2img_reference.py <tiny sdxl folder> <out.json>
"""
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diffusers  # noqa: E402
from diffusers import StableDiffusionXLImg2ImgPipeline, StableDiffusionXLPipeline  # noqa: E402
from sdxl_reference import PROMPT, det_input, harness_noise, image_fields, with_pt_format, write_fixture  # noqa: E402

STEPS = 10


def main():
    folder, out_path = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    loadable = with_pt_format(folder)
    base = StableDiffusionXLPipeline.from_pretrained(loadable, torch_dtype=torch.float32)
    pipe = StableDiffusionXLImg2ImgPipeline(**base.components)
    pipe.set_progress_bar_config(disable=True)
    assert pipe.watermark is None and not pipe.config.requires_aesthetics_score
    harness_noise()
    image = det_input("pipe/init_image", [1, 32, 32, 3], 0.25).numpy() + 0.5
    ran = []  # the timesteps the pipeline denoised at

    def record(_pipe, _i, t, kwargs):
        ran.append(float(t))
        return kwargs

    res = pipe(
        prompt=PROMPT, image=image, num_inference_steps=STEPS, output_type="np", callback_on_step_end=record
    )
    fx = {
        "diffusers": diffusers.__version__,
        "torch": torch.__version__,
        "prompt": PROMPT,
        "settings": {
            "num_inference_steps": STEPS,
            "strength": 0.3,
            "guidance_scale": 5.0,
            "negative_prompt": None,
            "init_image": "det_input('pipe/init_image', [1, 32, 32, 3], 0.25) + 0.5 (NHWC in [0, 1])",
            "noise": "vae-noise/<k> (latent_dist.sample), pipe-noise/<k> (add_noise)",
        },
        "scheduler": type(pipe.scheduler).__name__,
        "timesteps": ran,
        **image_fields(res.images),
    }
    shutil.rmtree(loadable, ignore_errors=True)
    write_fixture(fx, out_path)


main()
