"""Reference numbers for ControlNet from Hugging Face diffusers 0.27.2 (dev-only; never a runtime dependency).

The tiny SD 1.x folder (`writeTinyPipeline(dir, { flavour: 'sd1' })`) and two tiny ControlNets
(`writeTinyControlNet(dir, { seed: 'a' | 'b' })`, scripts/make-tiny-controlnet.ts) through diffusers' own
`ControlNetModel`, `UNet2DConditionModel`, `AutoencoderKL` and `VaeImageProcessor`, in the loop of
`StableDiffusionControlNetPipeline.__call__` / `StableDiffusionControlNetImg2ImgPipeline.__call__` (0.27.2) for given
prompt embeddings, written out because the pipeline classes import transformers (not installed here):
scale_model_input; per ControlNet the keep of `controlnet_keep` (off where i/n < start or (i+1)/n > end), its input
(guess mode with guidance: the unscaled-batch latents and the positive embeddings only), its residuals times
conditioning_scale (guess mode: times logspace(-1, 0)), summed over the nets as `MultiControlNetModel` does, zeros for
the unconditional half in guess mode; the UNet with `down_block_additional_residuals` / `mid_block_additional_residual`;
guidance; the scheduler's step; decode and postprocess.

Inputs: prompt embeddings det_input("pipe/prompt_embeds") and det_input("pipe/negative_prompt_embeds") [1, 77, 32];
text2img latents det_input("pipe/latents") [1, 4, 16, 16] × init_noise_sigma; img2img: the picture `control/init`
encoded, its latent sample mean + std · det_input("vae-noise/0"), noised with det_input("pipe-noise/0").
Conditioning pictures: `picture(name, w, h)`, uint8 floor((det_uniform(name) + 1) · 127.5), given to the control
image processor as PIL images (RGB, Lanczos resize to the generation size, / 255, no normalize). Scheduler: the
folder's config as EulerDiscreteScheduler (no draws).

`residuals`: ControlNet `a`'s raw outputs (conditioning_scale 1) for det_input("cn/sample") [1, 4, 16, 16] at
timestep 500 with the positive embeddings and picture("control/a", 32, 32), NCHW.

Usage (see README.md beside this file for the environment; transformers is not needed):
  PYTHONPATH=<site> /usr/bin/python3 controlnet_reference.py <tiny sd1> <controlnet a> <controlnet b> <out.json>
"""
import json
import sys

import numpy as np
import PIL.Image
import safetensors.torch  # noqa: F401 (diffusers reads weights through `safetensors.torch`)
import torch

import diffusers
from diffusers import AutoencoderKL, ControlNetModel, EulerDiscreteScheduler, UNet2DConditionModel
from diffusers.image_processor import VaeImageProcessor

from det_harness import det_input, det_uniform, full, write_fixture

SIZE = 32
GUIDANCE = 7.5


def picture(name, w, h):
    u = det_uniform(name, w * h * 3)
    return np.clip(np.floor((u + 1) * 127.5), 0, 255).astype(np.uint8).reshape(h, w, 3)


# name -> (units, steps, guidance, img2img strength or None); a unit is (net, picture (name, w, h), scale, start,
# end, guess_mode)
CASES = {
    "one/scale_1": ([("a", ("control/a", 32, 32), 1.0, 0.0, 1.0, False)], 4, GUIDANCE, None),
    "one/scale_0.5": ([("a", ("control/a", 32, 32), 0.5, 0.0, 1.0, False)], 4, GUIDANCE, None),
    "two": (
        [
            ("a", ("control/a", 32, 32), 0.8, 0.0, 1.0, False),
            ("b", ("control/b", 32, 32), 0.6, 0.0, 1.0, False),
        ],
        4,
        GUIDANCE,
        None,
    ),
    "window/0.25-0.75": ([("a", ("control/a", 32, 32), 1.0, 0.25, 0.75, False)], 4, GUIDANCE, None),
    "resized/48x40": ([("a", ("control/big", 48, 40), 1.0, 0.0, 1.0, False)], 4, GUIDANCE, None),
    "guess_mode": ([("a", ("control/a", 32, 32), 1.0, 0.0, 1.0, True)], 4, GUIDANCE, None),
    "no_guidance": ([("a", ("control/a", 32, 32), 1.0, 0.0, 1.0, False)], 3, 1.0, None),
    "img2img/strength_0.6": ([("a", ("control/a", 32, 32), 1.0, 0.0, 1.0, False)], 5, GUIDANCE, 0.6),
}


def run_case(parts, units, steps, guidance, strength):
    unet, vae, nets, folder_config = parts
    s = EulerDiscreteScheduler.from_config(folder_config)
    s.set_timesteps(steps)
    guided = guidance > 1
    positive = det_input("pipe/prompt_embeds", [1, 77, 32])
    negative = det_input("pipe/negative_prompt_embeds", [1, 77, 32])
    embeds = torch.cat([negative, positive]) if guided else positive
    processor = VaeImageProcessor(vae_scale_factor=2, do_convert_rgb=True, do_normalize=False)
    images = []
    for net, (name, w, h), _scale, _start, _end, guess in units:
        image = processor.preprocess(PIL.Image.fromarray(picture(name, w, h)), height=SIZE, width=SIZE)
        image = image.to(dtype=torch.float32)
        images.append(torch.cat([image] * 2) if guided and not guess else image)
    with torch.no_grad():
        timesteps = s.timesteps
        if strength is None:
            latents = det_input("pipe/latents", [1, 4, 16, 16]) * s.init_noise_sigma
        else:
            init_timestep = min(int(steps * strength), steps)
            t_start = max(steps - init_timestep, 0)
            timesteps = s.timesteps[t_start * s.order :]
            s.set_begin_index(t_start * s.order)
            init = VaeImageProcessor(vae_scale_factor=2).preprocess(
                PIL.Image.fromarray(picture("control/init", SIZE, SIZE)), height=SIZE, width=SIZE
            )
            dist = vae.encode(init).latent_dist
            z = dist.mean + dist.std * det_input("vae-noise/0", list(dist.mean.shape))
            z = vae.config.scaling_factor * z
            latents = s.add_noise(z, det_input("pipe-noise/0", list(z.shape)), timesteps[:1])
        n = len(timesteps)
        for i, t in enumerate(timesteps):
            x_in = torch.cat([latents] * 2) if guided else latents
            x_in = s.scale_model_input(x_in, t)
            down, mid = None, None
            for (net, _pic, scale, start, end, guess), image in zip(units, images):
                keep = 1.0 - float(i / n < start or (i + 1) / n > end)
                if guess and guided:
                    c_in = s.scale_model_input(latents, t)
                    c_embeds = embeds.chunk(2)[1]
                else:
                    c_in, c_embeds = x_in, embeds
                d, m = nets[net](
                    c_in,
                    t,
                    encoder_hidden_states=c_embeds,
                    controlnet_cond=image,
                    conditioning_scale=scale * keep,
                    guess_mode=guess,
                    return_dict=False,
                )
                if guess and guided:
                    d = [torch.cat([torch.zeros_like(r), r]) for r in d]
                    m = torch.cat([torch.zeros_like(m), m])
                if down is None:
                    down, mid = list(d), m
                else:
                    down = [a + b for a, b in zip(down, d)]
                    mid = mid + m
            pred = unet(
                x_in,
                t,
                encoder_hidden_states=embeds,
                down_block_additional_residuals=down,
                mid_block_additional_residual=mid,
                return_dict=False,
            )[0]
            if guided:
                uncond, text = pred.chunk(2)
                pred = uncond + guidance * (text - uncond)
            latents = s.step(pred, t, latents, return_dict=False)[0]
        image = vae.decode(latents / vae.config.scaling_factor, return_dict=False)[0]
    image = (image / 2 + 0.5).clamp(0, 1).permute(0, 2, 3, 1).numpy()
    return {
        "units": [
            {
                "model": net,
                "picture": {"name": name, "width": w, "height": h},
                "conditioning_scale": scale,
                "guidance_start": start,
                "guidance_end": end,
                "guess_mode": guess,
            }
            for net, (name, w, h), scale, start, end, guess in units
        ],
        "steps": steps,
        "guidance_scale": guidance,
        "strength": strength,
        "timesteps": [float(t) for t in timesteps],
        "image_full": full(image),
        "image_uint8": [int(v) for v in (image * 255).round().astype(np.uint8).reshape(-1)],
    }


def raw_residuals(net):
    processor = VaeImageProcessor(vae_scale_factor=2, do_convert_rgb=True, do_normalize=False)
    image = processor.preprocess(PIL.Image.fromarray(picture("control/a", SIZE, SIZE)), height=SIZE, width=SIZE)
    with torch.no_grad():
        d, m = net(
            det_input("cn/sample", [1, 4, 16, 16]),
            500,
            encoder_hidden_states=det_input("pipe/prompt_embeds", [1, 77, 32]),
            controlnet_cond=image,
            return_dict=False,
        )
    return {"timestep": 500, "down": [full(r) for r in d], "mid": full(m)}


def main():
    folder, net_a, net_b, out_path = sys.argv[1:5]
    torch.set_num_threads(1)
    unet = UNet2DConditionModel.from_pretrained(folder, subfolder="unet", torch_dtype=torch.float32).eval()
    vae = AutoencoderKL.from_pretrained(folder, subfolder="vae", torch_dtype=torch.float32).eval()
    nets = {
        "a": ControlNetModel.from_pretrained(net_a, torch_dtype=torch.float32).eval(),
        "b": ControlNetModel.from_pretrained(net_b, torch_dtype=torch.float32).eval(),
    }
    folder_config = json.load(open(f"{folder}/scheduler/scheduler_config.json"))
    parts = (unet, vae, nets, folder_config)
    fx = {
        "diffusers": diffusers.__version__,
        "torch": torch.__version__,
        "about": __doc__,
        "residuals": raw_residuals(nets["a"]),
        "cases": {k: run_case(parts, *v) for k, v in CASES.items()},
    }
    write_fixture(fx, out_path)


if __name__ == "__main__":
    main()
