"""Inpainting reference numbers from Hugging Face diffusers 0.27.2 (dev-only; never a runtime dependency).

Runs diffusers' own `StableDiffusionInpaintPipeline.__call__` on the tiny SD 1.x folders the tests build:
- an inpainting UNet (9 input channels: latents, mask, masked image latents), `writeTinyPipeline(dir, { unetInChannels:
  9 })`;
- an ordinary UNet (4 channels), `writeTinyPipeline(dir)`, where diffusers 0.27 inpaints by blending: after each step the
  kept (black) part's latents are replaced by the image's own, noised to the next timestep.

Inputs (all in the fixture's `inputs`, so the tests read the same bytes): a 32×24 RGB picture, and a mask (white =
repaint) of an ellipse and a diagonal stripe with grey edges around the 50 % threshold (127 and 128 both occur), as a
PIL "L" image and as an "RGB" one whose colours diffusers turns grey with PIL's luma. Prompt embeddings
det_input("pipe/prompt_embeds", [1, 77, 32]) and det_input("pipe/negative_prompt_embeds", …) (no text encoder); the
noise draws are the harness's (docs/spec/diffusion.md §13): `vae-noise/<k>` for the VAE samples, `pipe-noise/<k>` for the
initial noise, `sched-noise/<k>` for Euler ancestral's steps, each counter from 0. Schedulers PNDM (the folder's), DDIM
(η 0), Euler, Euler ancestral and DPM++ 2M (the sigma ones noise the kept latents by step index), strength 1
and below 1, with and without classifier-free guidance. Each case records the timesteps the loop ran, the mask as the
UNet sees it, the VAE latents diffusers encoded (the image's where it needs them, the masked image's), the final
latents and the 8-bit image (round(x · 255) of the [0, 1] output).

diffusers' pipeline module imports `transformers` (for its text encoder, tokenizer and safety checker classes), which
this environment does not have and these cases never call: they pass prompt embeddings, and the pipeline is built with
`text_encoder`, `tokenizer`, `safety_checker` and `feature_extractor` None. `import_only_transformers()` puts an
import-only stand-in on `sys.path` before diffusers loads: placeholder classes that refuse to be instantiated, the
three file-name constants diffusers reads from `transformers.utils`, and a dist-info so diffusers counts it installed.
It computes nothing; every number comes from diffusers' pipeline, UNet, VAE, image processors and schedulers.

Usage (environment: README.md beside this file):
  PYTHONPATH=<site> /usr/bin/python3 inpaint_reference.py <tiny sd1 folder> <tiny sd1 inpainting folder> <out.json>
"""
import atexit
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

STANDIN_INIT = '''"""Import-only stand-in for transformers (see inpaint_reference.py): names, no code."""


class _Placeholder:
    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__} is an import-only stand-in: this reference never calls transformers")


def __getattr__(name):
    if name[:1].isupper():
        cls = type(name, (_Placeholder,), {})
        globals()[name] = cls
        return cls
    raise AttributeError(name)
'''

STANDIN_UTILS = '''WEIGHTS_NAME = "pytorch_model.bin"
SAFE_WEIGHTS_NAME = "model.safetensors"
FLAX_WEIGHTS_NAME = "flax_model.msgpack"
'''


def import_only_transformers():
    """A temporary `transformers` that only satisfies diffusers' imports (see the module docstring), removed at exit."""
    site = tempfile.mkdtemp(prefix="transformers-import-only-")
    os.makedirs(os.path.join(site, "transformers"))
    with open(os.path.join(site, "transformers", "__init__.py"), "w") as f:
        f.write(STANDIN_INIT)
    with open(os.path.join(site, "transformers", "utils.py"), "w") as f:
        f.write(STANDIN_UTILS)
    os.makedirs(os.path.join(site, "transformers-0+importonly.dist-info"))
    with open(os.path.join(site, "transformers-0+importonly.dist-info", "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: transformers\nVersion: 0+importonly\n")
    sys.path.insert(0, site)
    atexit.register(shutil.rmtree, site, True)


import_only_transformers()

import PIL.Image  # noqa: E402
import safetensors.torch  # noqa: E402,F401 (diffusers reads weights through `safetensors.torch`, which transformers imports elsewhere)

import diffusers  # noqa: E402
import diffusers.models.autoencoders.vae as vae_module  # noqa: E402
import diffusers.pipelines.stable_diffusion.pipeline_stable_diffusion_inpaint as inpaint_module  # noqa: E402
import diffusers.schedulers.scheduling_euler_ancestral_discrete as euler_a_module  # noqa: E402
from diffusers import (  # noqa: E402
    AutoencoderKL,
    DDIMScheduler,
    DPMSolverMultistepScheduler,
    EulerAncestralDiscreteScheduler,
    EulerDiscreteScheduler,
    PNDMScheduler,
    StableDiffusionInpaintPipeline,
    UNet2DConditionModel,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from det_harness import det_input, det_uniform, full, write_fixture  # noqa: E402

WIDTH, HEIGHT = 32, 24

SCHEDULERS = {
    "pndm": PNDMScheduler,
    "ddim": DDIMScheduler,
    "euler": EulerDiscreteScheduler,
    "euler_a": EulerAncestralDiscreteScheduler,
    "dpmpp_2m": DPMSolverMultistepScheduler,
}

# name -> (UNet: "inpainting" (9 channels) or "blending" (4), scheduler, steps, strength, guidance, mask mode)
CASES = {
    "inpainting_unet/pndm/strength_1": ("inpainting", "pndm", 4, 1.0, 7.5, "L"),
    "inpainting_unet/euler/strength_0.6": ("inpainting", "euler", 5, 0.6, 7.5, "RGB"),
    "inpainting_unet/ddim/strength_0.75/no_guidance": ("inpainting", "ddim", 4, 0.75, 1.0, "L"),
    "blending/pndm/strength_1": ("blending", "pndm", 4, 1.0, 7.5, "L"),
    "blending/euler/strength_0.6": ("blending", "euler", 5, 0.6, 7.5, "RGB"),
    "blending/ddim/strength_1/no_guidance": ("blending", "ddim", 4, 1.0, 1.0, "RGB"),
    # The sigma schedulers noise the kept latents to the timestep about to run (their `add_noise` step index).
    "blending/euler/strength_1": ("blending", "euler", 4, 1.0, 7.5, "L"),
    "blending/euler_a/strength_0.75": ("blending", "euler_a", 4, 0.75, 7.5, "L"),
    "blending/dpmpp_2m/strength_1": ("blending", "dpmpp_2m", 4, 1.0, 7.5, "RGB"),
}


def picture():
    """HWC uint8: gradients, a bright square, and some deterministic texture (so encoding it is not trivial)."""
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    texture = np.round(det_uniform("inpaint/texture", HEIGHT * WIDTH).reshape(HEIGHT, WIDTH) * 24)
    square = (x >= 4) & (x < 14) & (y >= 6) & (y < 16)
    r = np.where(square, 235, x * 7 + texture)
    g = y * 9 + texture
    b = np.where(square, 30, 150 - texture)
    return np.clip(np.stack([r, g, b], -1), 0, 255).astype(np.uint8)


def grey_mask():
    """HW uint8, white = repaint: an ellipse and a diagonal stripe, with grey edges crossing the 50 % threshold."""
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float64)
    d = np.sqrt(((x - 20.5) / 8.0) ** 2 + ((y - 10.5) / 6.5) ** 2)
    ellipse = 127.5 + (1 - d) * 300
    stripe = 127.5 + (2.5 - np.abs(x - 1.3 * y)) * 60
    m = np.clip(np.round(np.maximum(ellipse, stripe)), 0, 255).astype(np.uint8)
    # Exactly on either side of the threshold (127/255 keeps, 128/255 repaints).
    m[HEIGHT - 2, 24:28] = [127, 128, 127, 128]
    return m


def rgb_mask(grey):
    """The grey mask in colour: channels apart, so the repainted part depends on PIL's luma of each pixel."""
    g = grey.astype(np.int32)
    return np.clip(np.stack([g + 50, g - 10, g - 40], -1), 0, 255).astype(np.uint8)


class Recorder:
    """The pipeline's VAE encodings and the loop's timesteps, mask and latents, as diffusers computed them."""

    def __init__(self, pipe):
        self.encoded, self.timesteps, self.last = [], [], {}
        encode = pipe._encode_vae_image

        def recording_encode(image, generator):
            out = encode(image=image, generator=generator)
            self.encoded.append(out.clone())
            return out

        pipe._encode_vae_image = recording_encode

    def on_step_end(self, _pipe, _i, t, kwargs):
        self.timesteps.append(float(t))
        self.last = {k: v.clone() for k, v in kwargs.items()}
        return kwargs


def harness_noise():
    """diffusers' draws replaced by the harness's: `vae-noise/<k>` (VAE samples), `pipe-noise/<k>` (initial noise),
    `sched-noise/<k>` (Euler ancestral's per-step noise)."""
    counters = {"vae-noise": 0, "pipe-noise": 0, "sched-noise": 0}

    def draws(prefix):
        def draw(shape, generator=None, device=None, dtype=None, layout=None):
            k = counters[prefix]
            counters[prefix] += 1
            return det_input(f"{prefix}/{k}", list(shape))

        return draw

    vae_module.randn_tensor = draws("vae-noise")
    inpaint_module.randn_tensor = draws("pipe-noise")
    euler_a_module.randn_tensor = draws("sched-noise")
    return counters


def run_case(components, scheduler_config, image, masks, unet_kind, scheduler, steps, strength, guidance, mask_mode):
    pipe = StableDiffusionInpaintPipeline(
        vae=components["vae"],
        text_encoder=None,
        tokenizer=None,
        unet=components[unet_kind],
        scheduler=SCHEDULERS[scheduler].from_config(scheduler_config),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    pipe.set_progress_bar_config(disable=True)
    counters = harness_noise()
    rec = Recorder(pipe)
    guided = guidance > 1
    with torch.no_grad():
        out = pipe(
            prompt_embeds=det_input("pipe/prompt_embeds", [1, 77, 32]),
            negative_prompt_embeds=det_input("pipe/negative_prompt_embeds", [1, 77, 32]) if guided else None,
            image=PIL.Image.fromarray(image, "RGB"),
            mask_image=PIL.Image.fromarray(masks[mask_mode], mask_mode),
            height=HEIGHT,
            width=WIDTH,
            strength=strength,
            num_inference_steps=steps,
            guidance_scale=guidance,
            output_type="np",
            callback_on_step_end=rec.on_step_end,
            callback_on_step_end_tensor_inputs=["latents", "mask", "masked_image_latents"],
        )
    mask = rec.last["mask"]
    result = {
        "unet": unet_kind,
        "unet_in_channels": components[unet_kind].config.in_channels,
        "scheduler": scheduler,
        "num_inference_steps": steps,
        "strength": strength,
        "guidance_scale": guidance,
        "mask_mode": mask_mode,
        "timesteps": rec.timesteps,
        "noise_draws": dict(counters),
        # The binarised mask at latent size, as the UNet (9 channels) or the blend (4) uses it.
        "latent_mask": full(mask[:1]),
        # In encoding order: the image's latents (strength < 1, or blending), then the masked image's.
        "vae_latents": [full(e) for e in rec.encoded],
        "final_latents": full(rec.last["latents"]),
        "image_uint8": [int(v) for v in (out.images * 255).round().astype(np.uint8).reshape(-1)],
    }
    return result


def main():
    folder, inpaint_folder, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
    torch.set_num_threads(1)
    components = {
        "vae": AutoencoderKL.from_pretrained(folder, subfolder="vae", torch_dtype=torch.float32).eval(),
        "blending": UNet2DConditionModel.from_pretrained(folder, subfolder="unet", torch_dtype=torch.float32).eval(),
        "inpainting": UNet2DConditionModel.from_pretrained(
            inpaint_folder, subfolder="unet", torch_dtype=torch.float32
        ).eval(),
    }
    # Both folders have the same VAE and scheduler (only the UNet's input channels differ).
    for sub in ("vae/diffusion_pytorch_model.safetensors", "scheduler/scheduler_config.json"):
        assert open(f"{folder}/{sub}", "rb").read() == open(f"{inpaint_folder}/{sub}", "rb").read(), sub
    with open(f"{folder}/scheduler/scheduler_config.json") as f:
        scheduler_config = json.load(f)
    image = picture()
    grey = grey_mask()
    masks = {"L": grey, "RGB": rgb_mask(grey)}
    fx = {
        "diffusers": diffusers.__version__,
        "torch": torch.__version__,
        "about": __doc__,
        "inputs": {
            "width": WIDTH,
            "height": HEIGHT,
            "image_rgb": [int(v) for v in image.reshape(-1)],
            "mask_l": [int(v) for v in masks["L"].reshape(-1)],
            "mask_rgb": [int(v) for v in masks["RGB"].reshape(-1)],
            "prompt_embeds": "det_input('pipe/prompt_embeds', [1, 77, 32])",
            "negative_prompt_embeds": "det_input('pipe/negative_prompt_embeds', [1, 77, 32]) (guidance > 1 only)",
            "noise": "vae-noise/<k> (VAE samples), pipe-noise/<k> (initial noise), sched-noise/<k> (Euler ancestral)",
        },
        "cases": {name: run_case(components, scheduler_config, image, masks, *c) for name, c in CASES.items()},
    }
    write_fixture(fx, out_path)


if __name__ == "__main__":
    main()
