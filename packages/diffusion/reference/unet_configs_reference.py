"""Reference numbers for UNet2DConditionModel configs of distilled and pruned families (dev-only; never a runtime
dependency).

Reads the tiny folders `scripts/make-unet-family-folders.ts` writes (one per row of `src/tiny/unet-families.ts`:
BK-SDM small/tiny, SDXS, SSD-1B, Segmind Vega and a synthetic row with the remaining per-block fields) and records,
per folder:

- `config`: the UNet config diffusers was given, and `weights_match`: that the module names and shapes diffusers
  builds from it are exactly the folder's safetensors tensors (nothing missing, nothing unused);
- `unet`: diffusers' `UNet2DConditionModel` output in full at t = 981 and t = 1 for a sample
  det_input("unet-family/sample") [1, 4, 8, 8], context det_input("unet-family/context") [1, 77, D] and, for an SDXL
  row (`addition_embed_type: text_time`), text_embeds det_input("unet-family/text_embeds") and the time ids below;
- `pipelines` (SD 1.x/2.x rows): text2img with given embeddings through `fewstep_reference.pipeline_case` (the loop
  of `StableDiffusionPipeline.__call__`, the folder's UNet and VAE), and img2img through diffusers' own
  `StableDiffusionImg2ImgPipeline` with given embeddings (no text encoder): 8-bit images only;
- `pipelines` (SDXL rows): text2img and img2img through diffusers' own `StableDiffusionXLPipeline` and
  `StableDiffusionXLImg2ImgPipeline` without text encoders, given the prompt embeddings and pooled embeddings that
  transformers' `CLIPTextModel`/`CLIPTextModelWithProjection` computed for the tiny SDXL folder's encoders
  (`pipeline_sdxl.json`, written by sdxl_reference.py with transformers 4.33: the family folders have those very
  encoders, and the tests give the same prompt); guided cases have no negative prompt (SDXL's zero negative
  embeddings). A row whose folder has `requires_aesthetics_score` (the SDXL refiner's UNet) has its UNet only, with
  five time ids (the last an aesthetic score).

Inputs of the img2img cases: the init image det_input("pipe/init_image", [1, 32, 32, 3], 0.25) + 0.5 (NHWC in
[0, 1]), the VAE sample draws `vae-noise/<k>` and the img2img noise `pipe-noise/<k>` (docs/spec/diffusion.md §13).

diffusers' pipeline modules import transformers, which is not installed here and which these cases never call:
`inpaint_reference.import_only_transformers` (imported first) puts an import-only stand-in on `sys.path`.

Debian's torch 1.13 `baddbmm` with beta = 0 sometimes lets NaN in its uninitialised `input` through for small
head widths (documented: with beta 0 the input is ignored); diffusers' AttnProcessor passes `torch.empty` there, so
this script zeroes that input first (`_baddbmm_ignoring_input`), as the documented semantics say.

Usage (see README.md beside this file for the environment; transformers is not needed):
  PYTHONPATH=<site> /usr/bin/python3 unet_configs_reference.py <folders dir> <out.json>
"""
import json
import os
import sys

import inpaint_reference  # noqa: F401 (first: its import-only transformers stand-in, before diffusers loads)
import numpy as np
import torch
from safetensors import safe_open

import diffusers
import diffusers.models.autoencoders.vae as vae_module
import diffusers.pipelines.stable_diffusion.pipeline_stable_diffusion_img2img as img2img_module
import diffusers.pipelines.stable_diffusion_xl.pipeline_stable_diffusion_xl as sdxl_module
import diffusers.pipelines.stable_diffusion_xl.pipeline_stable_diffusion_xl_img2img as sdxl_img2img_module
from diffusers import (
    AutoencoderKL,
    StableDiffusionImg2ImgPipeline,
    StableDiffusionXLImg2ImgPipeline,
    StableDiffusionXLPipeline,
    UNet2DConditionModel,
)

from det_harness import det_input, full, write_fixture
from fewstep_reference import make_scheduler, pipeline_case

_baddbmm = torch.baddbmm


def _baddbmm_ignoring_input(input, batch1, batch2, *, beta=1, alpha=1):
    return _baddbmm(torch.zeros_like(input) if beta == 0 else input, batch1, batch2, beta=beta, alpha=alpha)


torch.baddbmm = _baddbmm_ignoring_input

TIME_IDS = [[64.0, 48.0, 2.0, 0.0, 64.0, 64.0]]
# The refiner's: original size, crop top-left, aesthetic score (diffusers' default 6).
AESTHETIC_TIME_IDS = [[64.0, 48.0, 2.0, 0.0, 6.0]]
TIMESTEPS = [981, 1]
# name -> (scheduler, config overrides, steps, guidance)
PIPELINE_CASES = {
    "euler_trailing_1": ("euler", {"timestep_spacing": "trailing"}, 1, 0.0),
    "dpmpp_2m_karras_2": ("dpmpp_2m", {"use_karras_sigmas": True}, 2, 7.5),
}
# name -> (scheduler, config overrides, steps, strength, guidance)
IMG2IMG_CASES = {
    "img2img_euler_trailing_4_strength_0.6": ("euler", {"timestep_spacing": "trailing"}, 4, 0.6, 0.0),
    "img2img_dpmpp_2m_karras_5_strength_0.6_guided": ("dpmpp_2m", {"use_karras_sigmas": True}, 5, 0.6, 7.5),
}
# name -> (kind, scheduler, config overrides, steps, strength, guidance)
SDXL_CASES = {
    "euler_trailing_1": ("text2img", "euler", {"timestep_spacing": "trailing"}, 1, None, 0.0),
    "dpmpp_2m_karras_2_guided": ("text2img", "dpmpp_2m", {"use_karras_sigmas": True}, 2, None, 5.0),
    "img2img_euler_trailing_4_strength_0.6": ("img2img", "euler", {"timestep_spacing": "trailing"}, 4, 0.6, 0.0),
    "img2img_dpmpp_2m_karras_5_strength_0.6_guided": (
        "img2img", "dpmpp_2m", {"use_karras_sigmas": True}, 5, 0.6, 5.0,
    ),
}
SDXL_FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "sd-reference",
                            "pipeline_sdxl.json")


def harness_noise(pipeline_module):
    """The VAE's sample draws `vae-noise/<k>` and the pipeline's `pipe-noise/<k>`, each counter from 0 (§13)."""
    counters = {"vae-noise": 0, "pipe-noise": 0}

    def draws(prefix):
        def draw(shape, generator=None, device=None, dtype=None, layout=None):
            k = counters[prefix]
            counters[prefix] += 1
            return det_input(f"{prefix}/{k}", list(shape))

        return draw

    vae_module.randn_tensor = draws("vae-noise")
    pipeline_module.randn_tensor = draws("pipe-noise")


def init_image():
    return det_input("pipe/init_image", [1, 32, 32, 3], 0.25).numpy() + 0.5


def run_recorded(pipe, **kwargs):
    """The pipeline's 8-bit image and the timesteps it denoised at."""
    ran = []

    def record(_pipe, _i, t, kw):
        ran.append(float(t))
        return kw

    pipe.set_progress_bar_config(disable=True)
    images = pipe(output_type="np", callback_on_step_end=record, **kwargs).images
    return ran, [int(v) for v in (images * 255).round().astype(np.uint8).reshape(-1)]


def img2img_case(unet, vae, scheduler_config, name, overrides, steps, strength, guidance):
    pipe = StableDiffusionImg2ImgPipeline(
        vae=vae, text_encoder=None, tokenizer=None, unet=unet,
        scheduler=make_scheduler(name, scheduler_config, overrides),
        safety_checker=None, feature_extractor=None, requires_safety_checker=False,
    )
    harness_noise(img2img_module)
    embeds = {"prompt_embeds": det_input("pipe/prompt_embeds", [1, 77, 32])}
    if guidance > 1:
        embeds["negative_prompt_embeds"] = det_input("pipe/negative_prompt_embeds", [1, 77, 32])
    ran, image = run_recorded(
        pipe, image=init_image(), strength=strength, num_inference_steps=steps, guidance_scale=guidance, **embeds
    )
    return {
        "kind": "img2img", "scheduler": name, "config_overrides": overrides, "steps": steps, "strength": strength,
        "guidance_scale": guidance, "timesteps": ran, "image_uint8": image,
    }


def sdxl_embeddings():
    """The tiny SDXL encoders' prompt embeddings (both penultimate states, concatenated) and pooled embeddings for
    pipeline_sdxl.json's prompt, as transformers computed them there."""
    fx = json.load(open(SDXL_FIXTURE))
    t = lambda key: torch.tensor(fx[key]["data"], dtype=torch.float32).reshape(fx[key]["shape"])  # noqa: E731
    context = torch.cat([t("text_encoder_penultimate_full"), t("text_encoder_2_penultimate_full")], dim=-1)
    return fx["prompt"], context, t("pooled_prompt_embeds_full")


def sdxl_case(unet, vae, scheduler_config, kind, name, overrides, steps, strength, guidance):
    prompt, context, pooled = sdxl_embeddings()
    parts = dict(vae=vae, text_encoder=None, text_encoder_2=None, tokenizer=None, tokenizer_2=None, unet=unet,
                 scheduler=make_scheduler(name, scheduler_config, overrides))
    common = dict(prompt_embeds=context, pooled_prompt_embeds=pooled, num_inference_steps=steps,
                  guidance_scale=guidance)
    if kind == "text2img":
        pipe = StableDiffusionXLPipeline(**parts)
        harness_noise(sdxl_module)
        ran, image = run_recorded(pipe, height=32, width=32, latents=det_input("pipe/latents", [1, 4, 16, 16]),
                                  **common)
    else:
        pipe = StableDiffusionXLImg2ImgPipeline(**parts)
        harness_noise(sdxl_img2img_module)
        ran, image = run_recorded(pipe, image=init_image(), strength=strength, **common)
    assert pipe.watermark is None and pipe.config.force_zeros_for_empty_prompt
    return {
        "kind": kind, "prompt": prompt, "scheduler": name, "config_overrides": overrides, "steps": steps,
        "strength": strength, "guidance_scale": guidance, "timesteps": ran, "image_uint8": image,
    }


def weights_match(folder, unet):
    with safe_open(os.path.join(folder, "unet", "diffusion_pytorch_model.safetensors"), "pt") as f:
        stored = {k: list(f.get_tensor(k).shape) for k in f.keys()}
    built = {k: list(v.shape) for k, v in unet.state_dict().items()}
    return {
        "missing": sorted(set(built) - set(stored)),
        "unused": sorted(set(stored) - set(built)),
        "shape_mismatch": sorted(k for k in built if k in stored and built[k] != stored[k]),
    }


def unet_outputs(unet, time_ids):
    c = unet.config
    width = c.cross_attention_dim if isinstance(c.cross_attention_dim, int) else c.cross_attention_dim[0]
    sample = det_input("unet-family/sample", [1, c.in_channels, 8, 8])
    context = det_input("unet-family/context", [1, 77, width])
    kwargs = {}
    if c.addition_embed_type == "text_time":
        pooled = c.projection_class_embeddings_input_dim - len(time_ids[0]) * c.addition_time_embed_dim
        kwargs["added_cond_kwargs"] = {
            "text_embeds": det_input("unet-family/text_embeds", [1, pooled]),
            "time_ids": torch.tensor(time_ids),
        }
    out = {}
    with torch.no_grad():
        for t in TIMESTEPS:
            out[f"t{t}"] = full(unet(sample, t, encoder_hidden_states=context, return_dict=False, **kwargs)[0])
    return out


def family_case(folder):
    unet = UNet2DConditionModel.from_pretrained(folder, subfolder="unet", torch_dtype=torch.float32).eval()
    model_index = json.load(open(os.path.join(folder, "model_index.json")))
    refiner = model_index.get("requires_aesthetics_score", False)
    time_ids = AESTHETIC_TIME_IDS if refiner else TIME_IDS
    case = {
        "config": json.load(open(os.path.join(folder, "unet", "config.json"))),
        "requires_aesthetics_score": refiner,
        "weights_match": weights_match(folder, unet),
        "parameters": sum(p.numel() for p in unet.parameters()),
        "time_ids": time_ids,
        "unet": unet_outputs(unet, time_ids),
    }
    if refiner:
        return case
    vae = AutoencoderKL.from_pretrained(folder, subfolder="vae", torch_dtype=torch.float32).eval()
    scheduler_config = json.load(open(os.path.join(folder, "scheduler", "scheduler_config.json")))
    case["pipelines"] = {}
    if unet.config.addition_embed_type is None:
        for key, args in PIPELINE_CASES.items():
            p = pipeline_case(unet, vae, scheduler_config, *args)
            del p["image_full"]
            case["pipelines"][key] = {"kind": "text2img", **p}
        for key, args in IMG2IMG_CASES.items():
            case["pipelines"][key] = img2img_case(unet, vae, scheduler_config, *args)
    else:
        for key, args in SDXL_CASES.items():
            case["pipelines"][key] = sdxl_case(unet, vae, scheduler_config, *args)
    return case


def main():
    folders, out_path = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    fx = {
        "diffusers": diffusers.__version__,
        "torch": torch.__version__,
        "about": __doc__,
        "inputs": {"sample_shape": [1, 4, 8, 8], "timesteps": TIMESTEPS},
        "families": {name: family_case(os.path.join(folders, name)) for name in sorted(os.listdir(folders))},
    }
    for name, case in fx["families"].items():
        w = case["weights_match"]
        print(f"{name}: {case['parameters']} parameters; missing {len(w['missing'])}, unused {len(w['unused'])}, "
              f"shape mismatches {len(w['shape_mismatch'])}")
    write_fixture(fx, out_path)


if __name__ == "__main__":
    main()
