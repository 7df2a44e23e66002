"""Reference numbers for the schedulers behind AUTOMATIC1111's sampler names, from Hugging Face diffusers 0.27.2 (dev-only;
never a runtime dependency): UniPCMultistepScheduler (bh2 and bh1), HeunDiscreteScheduler, LMSDiscreteScheduler,
KDPM2DiscreteScheduler, KDPM2AncestralDiscreteScheduler, DPMSolverSDEScheduler and DPMSolverMultistepScheduler with
algorithm_type "sde-dpmsolver++", with and without Karras sigmas.

Two blocks, written to one JSON file:

- `schedulers`: diffusers' own classes on the closed-form model and latent of `schedulers.json` (docs/spec/diffusion.md
  §13, the loop of fewstep_reference.py): scale_model_input → model → step on det_input("sched/latents") ×
  init_noise_sigma, recording the timesteps, the sigmas and the latent after every step. The stochastic draws are
  given: randn_tensor (KDPM2 ancestral, DPM++ 2M SDE) and DPMSolverSDEScheduler's Brownian-tree noise sampler (torchsde
  is not installed; each call of the sampler returns the next draw) are both det_input("sched-noise/<k>"), k counting
  every draw of the run.
- `pipelines`: a few of them on the tiny SD 1.x folder through diffusers' UNet2DConditionModel and AutoencoderKL with
  given prompt embeddings, latents and draws (fewstep_reference.pipeline_case), with the 8-bit images.

Usage (see README.md beside this file for the environment; transformers is not needed):
  PYTHONPATH=<site> /usr/bin/python3 more_schedulers_reference.py <tiny sd1 folder> <out.json>
"""
import json
import sys
import types

import torch


def _torchsde_stand_in():
    """torchsde is not installed, and diffusers then exports a placeholder DPMSolverSDEScheduler; its module imports
    torchsde only for BrownianTree, which this script never builds (the noise sampler is given, see `attach`)."""
    module = types.ModuleType("torchsde")

    def brownian_tree(*args, **kwargs):
        raise RuntimeError("torchsde stand-in: the noise sampler must be given")

    module.BrownianTree = brownian_tree
    sys.modules["torchsde"] = module


import diffusers
import diffusers.schedulers.scheduling_dpmsolver_multistep as dpm_module
import diffusers.schedulers.scheduling_k_dpm_2_ancestral_discrete as kdpm2_a_module
from diffusers import (
    AutoencoderKL,
    DPMSolverMultistepScheduler,
    HeunDiscreteScheduler,
    KDPM2AncestralDiscreteScheduler,
    KDPM2DiscreteScheduler,
    LMSDiscreteScheduler,
    UNet2DConditionModel,
    UniPCMultistepScheduler,
)


_torchsde_stand_in()  # after diffusers' own import, which probes for the real package
from diffusers.schedulers.scheduling_dpmsolver_sde import DPMSolverSDEScheduler  # noqa: E402

import fewstep_reference as fewstep
from det_harness import det_input, full, write_fixture

SD = fewstep.SD

CLASSES = {
    "unipc": UniPCMultistepScheduler,
    "heun": HeunDiscreteScheduler,
    "lms": LMSDiscreteScheduler,
    "kdpm2": KDPM2DiscreteScheduler,
    "kdpm2_a": KDPM2AncestralDiscreteScheduler,
    "dpmpp_sde": DPMSolverSDEScheduler,
    "dpmpp_2m_sde": DPMSolverMultistepScheduler,
}

KARRAS = {"use_karras_sigmas": True}
SDE = {"algorithm_type": "sde-dpmsolver++"}

# name -> (scheduler, config overrides, steps)
SCHEDULER_CASES = {
    "unipc/4": ("unipc", {}, 4),
    "unipc/10": ("unipc", {}, 10),
    "unipc/karras/10": ("unipc", KARRAS, 10),
    "unipc/order_3/10": ("unipc", {"solver_order": 3}, 10),
    "unipc/bh1/6": ("unipc", {"solver_type": "bh1"}, 6),
    "unipc/v_prediction/6": ("unipc", {"prediction_type": "v_prediction"}, 6),
    "heun/4": ("heun", {}, 4),
    "heun/karras/6": ("heun", KARRAS, 6),
    "heun/leading/5": ("heun", {"timestep_spacing": "leading"}, 5),
    "heun/v_prediction/4": ("heun", {"prediction_type": "v_prediction"}, 4),
    "lms/4": ("lms", {}, 4),
    "lms/10": ("lms", {}, 10),
    "lms/karras/10": ("lms", KARRAS, 10),
    "kdpm2/4": ("kdpm2", {}, 4),
    "kdpm2/karras/6": ("kdpm2", KARRAS, 6),
    "kdpm2/leading/5": ("kdpm2", {"timestep_spacing": "leading"}, 5),
    "kdpm2_a/4": ("kdpm2_a", {}, 4),
    "kdpm2_a/karras/6": ("kdpm2_a", KARRAS, 6),
    "dpmpp_sde/4": ("dpmpp_sde", {}, 4),
    "dpmpp_sde/karras/6": ("dpmpp_sde", KARRAS, 6),
    "dpmpp_2m_sde/10": ("dpmpp_2m_sde", SDE, 10),
    "dpmpp_2m_sde/karras/10": ("dpmpp_2m_sde", {**SDE, **KARRAS}, 10),
    "dpmpp_2m_sde/heun/karras/6": ("dpmpp_2m_sde", {**SDE, **KARRAS, "solver_type": "heun"}, 6),
}

# name -> (scheduler, config overrides, steps, guidance)
PIPELINE_CASES = {
    "unipc_6": ("unipc", {}, 6, 7.5),
    "heun_karras_3": ("heun", KARRAS, 3, 7.5),
    "dpmpp_sde_karras_3": ("dpmpp_sde", KARRAS, 3, 0.0),
    "dpmpp_2m_sde_karras_4": ("dpmpp_2m_sde", {**SDE, **KARRAS}, 4, 7.5),
}


class Draws(fewstep.Draws):
    """randn_tensor and the SDE scheduler's noise sampler, both det_input("sched-noise/<k>") from one counter."""

    def install(self):
        kdpm2_a_module.randn_tensor = self
        dpm_module.randn_tensor = self


def attach(s, draws, shape):
    """DPMSolverSDEScheduler.step builds a torchsde BrownianTreeNoiseSampler when `noise_sampler` is None, and
    set_timesteps resets it: after each set_timesteps, a given sampler whose every call is the next draw."""
    if not isinstance(s, DPMSolverSDEScheduler):
        return
    set_timesteps = s.set_timesteps

    def with_given_noise(*args, **kwargs):
        set_timesteps(*args, **kwargs)
        s.noise_sampler = lambda sigma, sigma_next: draws(shape)

    s.set_timesteps = with_given_noise


def scheduler_case(name, overrides, steps):
    s = CLASSES[name].from_config({**SD, **overrides})
    draws = Draws()
    draws.install()
    shape = [1, 4, 4, 4]
    attach(s, draws, shape)
    s.set_timesteps(steps)
    x = det_input("sched/latents", shape) * s.init_noise_sigma
    latents = []
    for t in s.timesteps:
        x_in = s.scale_model_input(x, t)
        x = s.step(fewstep.dummy_model(x_in, t), t, x).prev_sample
        latents.append([round(float(v), 7) for v in x.reshape(-1)])
    return {
        "scheduler": name,
        "config": {**SD, **overrides},
        "steps": steps,
        "timesteps": [float(t) for t in s.timesteps],
        "sigmas": [float(v) for v in s.sigmas],
        "init_noise_sigma": float(s.init_noise_sigma),
        "draws": draws.k,
        "latents": latents,
        "final": full(x),
    }


def pipeline_case(unet, vae, folder_config, name, overrides, steps, guidance):
    """fewstep_reference.pipeline_case with these classes, every draw from this run's counter."""
    draws = Draws()

    def make(n, config, o):
        s = CLASSES[n].from_config({**config, **o})
        attach(s, draws, [1, 4, 16, 16])
        return s

    fewstep.make_scheduler = make
    fewstep.Draws = lambda: draws
    out = fewstep.pipeline_case(unet, vae, folder_config, name, overrides, steps, guidance)
    del out["image_full"]  # the 8-bit image is what the tests compare; keeps the fixture small
    out["draws"] = draws.k
    return out


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
