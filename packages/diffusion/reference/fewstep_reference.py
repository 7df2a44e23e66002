"""Reference numbers for the few-step schedulers from Hugging Face diffusers (dev-only; never a runtime dependency).

Two blocks, written to one JSON file:

- `schedulers`: diffusers' own scheduler classes (LCMScheduler at 1 and 4 steps, ε and v prediction; trailing Euler and
  Euler ancestral; DPM++ 2M with Karras sigmas) on the closed-form model and latent of `schedulers.json`
  (docs/spec/diffusion.md §13): scale_model_input → model → step, with the stochastic draws replaced by
  det_input("sched-noise/<k>").
- `pipelines`: the tiny SD 1.x folder (`writeTinyPipeline(dir, { flavour: 'sd1' })`) through diffusers'
  `UNet2DConditionModel` and `AutoencoderKL` with those schedulers, given prompt embeddings
  det_input("pipe/prompt_embeds") (and det_input("pipe/negative_prompt_embeds") with guidance), latents
  det_input("pipe/latents") and the scheduler draws above. The loop is `StableDiffusionPipeline.__call__`'s
  (0.27.2) for given embeddings, written out here because the pipeline class imports transformers, which these
  cases do not need: scale_model_input, UNet, classifier-free guidance only when guidance_scale > 1, step, then
  decode latents / scaling_factor and postprocess ((x / 2 + 0.5).clamp(0, 1), uint8 = round(x · 255)).

Usage (see README.md beside this file for the environment; transformers is not needed):
  PYTHONPATH=<site> /usr/bin/python3 fewstep_reference.py <tiny sd1 folder> <out.json>
"""
import json
import sys

import numpy as np
import safetensors.torch  # noqa: F401 (diffusers reads weights through `safetensors.torch`, which transformers imports elsewhere)
import torch

import diffusers
import diffusers.schedulers.scheduling_euler_ancestral_discrete as euler_a_module
import diffusers.schedulers.scheduling_lcm as lcm_module
from diffusers import (
    AutoencoderKL,
    DPMSolverMultistepScheduler,
    EulerAncestralDiscreteScheduler,
    EulerDiscreteScheduler,
    LCMScheduler,
    UNet2DConditionModel,
)

from det_harness import det_input, full, write_fixture

SD = {
    "num_train_timesteps": 1000,
    "beta_start": 0.00085,
    "beta_end": 0.012,
    "beta_schedule": "scaled_linear",
    "steps_offset": 1,
    "prediction_type": "epsilon",
}

CLASSES = {
    "lcm": LCMScheduler,
    "euler": EulerDiscreteScheduler,
    "euler_a": EulerAncestralDiscreteScheduler,
    "dpmpp_2m": DPMSolverMultistepScheduler,
}

# name -> (scheduler, config overrides, steps)
SCHEDULER_CASES = {
    "lcm/epsilon/1": ("lcm", {}, 1),
    "lcm/epsilon/4": ("lcm", {}, 4),
    "lcm/v_prediction/4": ("lcm", {"prediction_type": "v_prediction"}, 4),
    "lcm/epsilon/4/original_20": ("lcm", {"original_inference_steps": 20}, 4),
    "euler/trailing/1": ("euler", {"timestep_spacing": "trailing"}, 1),
    "euler/trailing/4": ("euler", {"timestep_spacing": "trailing"}, 4),
    "euler_a/trailing/4": ("euler_a", {"timestep_spacing": "trailing"}, 4),
    "dpmpp_2m_karras/4": ("dpmpp_2m", {"use_karras_sigmas": True}, 4),
    "dpmpp_2m_karras/trailing/10": ("dpmpp_2m", {"use_karras_sigmas": True, "timestep_spacing": "trailing"}, 10),
}

# name -> (scheduler, config overrides, steps, guidance)
PIPELINE_CASES = {
    "lcm_1": ("lcm", {}, 1, 1.0),
    "lcm_4": ("lcm", {}, 4, 1.0),
    "euler_trailing_1": ("euler", {"timestep_spacing": "trailing"}, 1, 0.0),
    "euler_trailing_4": ("euler", {"timestep_spacing": "trailing"}, 4, 0.0),
    "euler_a_trailing_4": ("euler_a", {"timestep_spacing": "trailing"}, 4, 0.0),
    "dpmpp_2m_karras_4": ("dpmpp_2m", {"use_karras_sigmas": True}, 4, 7.5),
}


class Draws:
    """The schedulers' randn_tensor replaced by det_input("sched-noise/<k>"), one counter per run."""

    def __init__(self):
        self.k = 0

    def __call__(self, shape, generator=None, device=None, dtype=None, layout=None):
        out = det_input(f"sched-noise/{self.k}", list(shape))
        self.k += 1
        return out

    def install(self):
        lcm_module.randn_tensor = self
        euler_a_module.randn_tensor = self


def make_scheduler(name, folder_config, overrides):
    return CLASSES[name].from_config({**folder_config, **overrides})


def dummy_model(x_in, t):
    t = float(t)
    return 0.5 * torch.tanh(x_in) * np.float32(np.cos(np.float32(t / 300))) + np.float32(
        0.1 * np.float32(np.sin(np.float32(t / 70)))
    )


def scheduler_case(name, overrides, steps):
    s = make_scheduler(name, SD, overrides)
    Draws().install()
    s.set_timesteps(steps)
    x = det_input("sched/latents", [1, 4, 4, 4]) * s.init_noise_sigma
    for t in s.timesteps:
        x_in = s.scale_model_input(x, t)
        x = s.step(dummy_model(x_in, t), t, x).prev_sample
    out = {
        "scheduler": name,
        "config": {**SD, **overrides},
        "steps": steps,
        "timesteps": [float(t) for t in s.timesteps],
        "init_noise_sigma": float(s.init_noise_sigma),
        "final": full(x),
    }
    if hasattr(s, "sigmas"):
        out["sigmas"] = [float(v) for v in s.sigmas]
    return out


def pipeline_case(unet, vae, folder_config, name, overrides, steps, guidance):
    s = make_scheduler(name, folder_config, overrides)
    Draws().install()
    s.set_timesteps(steps)
    positive = det_input("pipe/prompt_embeds", [1, 77, 32])
    guided = guidance > 1 and unet.config.time_cond_proj_dim is None
    embeds = torch.cat([det_input("pipe/negative_prompt_embeds", [1, 77, 32]), positive]) if guided else positive
    latents = det_input("pipe/latents", [1, 4, 16, 16]) * s.init_noise_sigma
    with torch.no_grad():
        for t in s.timesteps:
            x_in = torch.cat([latents] * 2) if guided else latents
            x_in = s.scale_model_input(x_in, t)
            pred = unet(x_in, t, encoder_hidden_states=embeds, return_dict=False)[0]
            if guided:
                uncond, text = pred.chunk(2)
                pred = uncond + guidance * (text - uncond)
            latents = s.step(pred, t, latents, return_dict=False)[0]
        image = vae.decode(latents / vae.config.scaling_factor, return_dict=False)[0]
    image = (image / 2 + 0.5).clamp(0, 1).permute(0, 2, 3, 1).numpy()
    return {
        "scheduler": name,
        "config_overrides": overrides,
        "steps": steps,
        "guidance_scale": guidance,
        "timesteps": [float(t) for t in s.timesteps],
        "image_full": full(image),
        "image_uint8": [int(v) for v in (image * 255).round().astype(np.uint8).reshape(-1)],
    }


def main():
    folder, out_path = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    fx = {
        "diffusers": diffusers.__version__,
        "torch": torch.__version__,
        "about": __doc__,
        "schedulers": {k: scheduler_case(*v) for k, v in SCHEDULER_CASES.items()},
    }
    unet = UNet2DConditionModel.from_pretrained(folder, subfolder="unet", torch_dtype=torch.float32).eval()
    vae = AutoencoderKL.from_pretrained(folder, subfolder="vae", torch_dtype=torch.float32).eval()
    folder_config = json.load(open(f"{folder}/scheduler/scheduler_config.json"))
    fx["pipelines"] = {k: pipeline_case(unet, vae, folder_config, *v) for k, v in PIPELINE_CASES.items()}
    write_fixture(fx, out_path)


if __name__ == "__main__":
    main()
