"""SDXL request fields reference for the tiny SDXL pipeline from diffusers (dev-only; never a runtime dependency).

The fields of `StableDiffusionXLPipeline` (text2img) and `StableDiffusionXLImg2ImgPipeline` that go to the second
encoder and to the micro-conditioning: `prompt_2`, `negative_prompt_2`, `original_size`, `crops_coords_top_left`,
`target_size` and their `negative_*` counterparts. For each case it records the time ids diffusers hands the UNet
(read from the UNet call itself), the prompt encoding (`encode_prompt`), both tokenizers' ids of the second prompts,
and the image, on the same tiny folder, deterministic latents and noise as `sdxl_reference.py` and
`sdxl_img2img_reference.py` (docs/spec/diffusion.md §11.3, §13).

Usage (environment: README.md beside this file):
  PYTHONPATH=<site> /usr/bin/python3 sdxl_conditioning_reference.py <tiny sdxl folder> <out.json>
"""
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diffusers  # noqa: E402
import transformers  # noqa: E402
from diffusers import StableDiffusionXLImg2ImgPipeline  # noqa: E402
from sdxl_reference import (  # noqa: E402
    GUIDANCE,
    NEGATIVE,
    PROMPT,
    SIZE,
    STEPS,
    det_input,
    full,
    harness_noise,
    image_fields,
    open_pipeline,
    summary,
    token_ids,
    write_fixture,
)

PROMPT_2 = "a watercolor of a red fox in the snow"
NEGATIVE_2 = "blurry, low quality, café ünïcode ☕"
IMG2IMG_STEPS = 10  # × strength 0.3: 3 steps

# text2img cases: the keyword arguments beside the common ones (prompt, size, steps, guidance, latents).
TEXT2IMG_CASES = {
    "prompt_2": {"negative_prompt": NEGATIVE, "prompt_2": PROMPT_2, "negative_prompt_2": NEGATIVE_2},
    # No negative prompt: zero negative embeddings (force_zeros_for_empty_prompt), prompt_2 still reaches encoder 2.
    "prompt_2_zero_negative": {"prompt_2": PROMPT_2},
    # negative_* absent: the negative rows take the positive time ids.
    "micro_conditioning": {
        "negative_prompt": NEGATIVE,
        "original_size": (64, 48),
        "crops_coords_top_left": (8, 4),
        "target_size": (24, 40),
    },
    "negative_micro_conditioning": {
        "negative_prompt": NEGATIVE,
        "original_size": (64, 48),
        "crops_coords_top_left": (8, 4),
        "target_size": (24, 40),
        "negative_original_size": (16, 16),
        "negative_crops_coords_top_left": (2, 6),
        "negative_target_size": (32, 32),
    },
}

# img2img: negative_original_size / negative_target_size default to the positive ones, and the negative row takes the
# positive crops (`_get_add_time_ids` without aesthetic score).
IMG2IMG_CASE = {
    "negative_prompt": NEGATIVE,
    "prompt_2": PROMPT_2,
    "original_size": (64, 48),
    "crops_coords_top_left": (8, 4),
    "target_size": (24, 40),
    "negative_original_size": (16, 16),
}


def record_time_ids(unet):
    """Wraps the UNet's forward so that each call's `time_ids` (the rows diffusers built) are kept."""
    calls = []
    forward = unet.forward

    def recording(*args, **kwargs):
        calls.append(kwargs["added_cond_kwargs"]["time_ids"].tolist())
        return forward(*args, **kwargs)

    unet.forward = recording
    return calls


def jsonable(kwargs):
    return {k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()}


def main():
    folder, out_path = sys.argv[1], sys.argv[2]
    pipe, loadable = open_pipeline(folder)
    assert pipe.watermark is None and pipe.config.force_zeros_for_empty_prompt
    calls = record_time_ids(pipe.unet)

    fx = {
        "diffusers": diffusers.__version__,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "prompt": PROMPT,
        "negative_prompt": NEGATIVE,
        "prompt_2": PROMPT_2,
        "negative_prompt_2": NEGATIVE_2,
        "token_ids": {
            "prompt_2": [token_ids(pipe.tokenizer, PROMPT_2), token_ids(pipe.tokenizer_2, PROMPT_2)],
            "negative_prompt_2": [token_ids(pipe.tokenizer, NEGATIVE_2), token_ids(pipe.tokenizer_2, NEGATIVE_2)],
        },
        "txt2img_settings": {
            "height": SIZE,
            "width": SIZE,
            "num_inference_steps": STEPS,
            "guidance_scale": GUIDANCE,
            "latents": "pipe/latents",
        },
    }

    with torch.no_grad():
        # encode_prompt with different prompts per encoder: context = [enc1(prompt) | enc2(prompt_2)],
        # pooled = enc2(prompt_2)'s text_embeds; the negative likewise from negative_prompt / negative_prompt_2.
        pe, npe, pooled, npooled = pipe.encode_prompt(
            PROMPT,
            prompt_2=PROMPT_2,
            device="cpu",
            do_classifier_free_guidance=True,
            negative_prompt=NEGATIVE,
            negative_prompt_2=NEGATIVE_2,
        )
        fx["encode_prompt"] = {
            "prompt_embeds": summary(pe),
            "negative_prompt_embeds": summary(npe),
            "pooled_prompt_embeds_full": full(pooled),
            "negative_pooled_prompt_embeds_full": full(npooled),
        }

    cases = {}
    for key, kwargs in TEXT2IMG_CASES.items():
        calls.clear()
        res = pipe(
            prompt=PROMPT,
            height=SIZE,
            width=SIZE,
            num_inference_steps=STEPS,
            guidance_scale=GUIDANCE,
            latents=det_input("pipe/latents", [1, 4, 16, 16]),
            output_type="np",
            **kwargs,
        )
        assert all(c == calls[0] for c in calls), "time ids change between steps"
        # Rows: [negative, positive] (classifier-free guidance batch order).
        cases[key] = {"request": jsonable(kwargs), "time_ids": calls[0], **image_fields(res.images)}
    fx["txt2img"] = cases

    # Two images per prompt with negative sizes: diffusers 0.27.2's text2img concatenates [negative, positive] time
    # ids and then repeats the pair (`.repeat(n, 1)`), so its rows alternate while the embeddings are [negative × n,
    # positive × n]; recorded to document why Tiffin pairs each row with its own embedding instead.
    calls.clear()
    batch = dict(TEXT2IMG_CASES["negative_micro_conditioning"])
    pipe(
        prompt=PROMPT, height=SIZE, width=SIZE, num_inference_steps=1, guidance_scale=GUIDANCE,
        num_images_per_prompt=2, latents=det_input("pipe/latents-2", [2, 4, 16, 16]), output_type="latent", **batch,
    )
    fx["txt2img_two_images_time_ids"] = {"request": jsonable(batch), "time_ids": calls[0]}

    # img2img: the harness's VAE and img2img noise draws (as sdxl_img2img_reference.py), SDXL defaults.
    harness_noise()
    img2img = StableDiffusionXLImg2ImgPipeline(**pipe.components)
    img2img.set_progress_bar_config(disable=True)
    assert not img2img.config.requires_aesthetics_score
    image = det_input("pipe/init_image", [1, 32, 32, 3], 0.25).numpy() + 0.5
    calls.clear()
    res = img2img(prompt=PROMPT, image=image, num_inference_steps=IMG2IMG_STEPS, output_type="np", **IMG2IMG_CASE)
    fx["img2img"] = {
        "request": jsonable(IMG2IMG_CASE),
        "settings": {
            "num_inference_steps": IMG2IMG_STEPS,
            "strength": 0.3,
            "guidance_scale": 5.0,
            "init_image": "det_input('pipe/init_image', [1, 32, 32, 3], 0.25) + 0.5 (NHWC in [0, 1])",
            "noise": "vae-noise/<k> (latent_dist.sample), pipe-noise/<k> (add_noise)",
        },
        "time_ids": calls[0],
        **image_fields(res.images),
    }

    shutil.rmtree(loadable, ignore_errors=True)
    write_fixture(fx, out_path)


main()
