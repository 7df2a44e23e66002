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
  of `StableDiffusionPipeline.__call__`, the folder's UNet and VAE): 8-bit images only.

Debian's torch 1.13 `baddbmm` with beta = 0 sometimes lets NaN in its uninitialised `input` through for small
head widths (documented: with beta 0 the input is ignored); diffusers' AttnProcessor passes `torch.empty` there, so
this script zeroes that input first (`_baddbmm_ignoring_input`), as the documented semantics say.

Usage (see README.md beside this file for the environment; transformers is not needed):
  PYTHONPATH=<site> /usr/bin/python3 unet_configs_reference.py <folders dir> <out.json>
"""
import json
import os
import sys

import torch
from safetensors import safe_open

import diffusers
from diffusers import AutoencoderKL, UNet2DConditionModel

from det_harness import det_input, full, write_fixture
from fewstep_reference import pipeline_case

_baddbmm = torch.baddbmm


def _baddbmm_ignoring_input(input, batch1, batch2, *, beta=1, alpha=1):
    return _baddbmm(torch.zeros_like(input) if beta == 0 else input, batch1, batch2, beta=beta, alpha=alpha)


torch.baddbmm = _baddbmm_ignoring_input

TIME_IDS = [[64.0, 48.0, 2.0, 0.0, 64.0, 64.0]]
TIMESTEPS = [981, 1]
# name -> (scheduler, config overrides, steps, guidance)
PIPELINE_CASES = {
    "euler_trailing_1": ("euler", {"timestep_spacing": "trailing"}, 1, 0.0),
    "dpmpp_2m_karras_2": ("dpmpp_2m", {"use_karras_sigmas": True}, 2, 7.5),
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


def unet_outputs(unet):
    c = unet.config
    width = c.cross_attention_dim if isinstance(c.cross_attention_dim, int) else c.cross_attention_dim[0]
    sample = det_input("unet-family/sample", [1, c.in_channels, 8, 8])
    context = det_input("unet-family/context", [1, 77, width])
    kwargs = {}
    if c.addition_embed_type == "text_time":
        pooled = c.projection_class_embeddings_input_dim - 6 * c.addition_time_embed_dim
        kwargs["added_cond_kwargs"] = {
            "text_embeds": det_input("unet-family/text_embeds", [1, pooled]),
            "time_ids": torch.tensor(TIME_IDS),
        }
    out = {}
    with torch.no_grad():
        for t in TIMESTEPS:
            out[f"t{t}"] = full(unet(sample, t, encoder_hidden_states=context, return_dict=False, **kwargs)[0])
    return out


def family_case(folder):
    unet = UNet2DConditionModel.from_pretrained(folder, subfolder="unet", torch_dtype=torch.float32).eval()
    case = {
        "config": json.load(open(os.path.join(folder, "unet", "config.json"))),
        "weights_match": weights_match(folder, unet),
        "parameters": sum(p.numel() for p in unet.parameters()),
        "time_ids": TIME_IDS,
        "unet": unet_outputs(unet),
    }
    if unet.config.addition_embed_type is None:
        vae = AutoencoderKL.from_pretrained(folder, subfolder="vae", torch_dtype=torch.float32).eval()
        scheduler_config = json.load(open(os.path.join(folder, "scheduler", "scheduler_config.json")))
        case["pipelines"] = {}
        for key, args in PIPELINE_CASES.items():
            p = pipeline_case(unet, vae, scheduler_config, *args)
            del p["image_full"]
            case["pipelines"][key] = p
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
