"""Reference numbers for the tiny SDXL pipeline from Hugging Face diffusers (dev-only; never a runtime dependency).

Loads the tiny SDXL folder that Tiffin writes (`writeTinyPipeline(dir, { flavour: 'sdxl' })`, docs/spec/diffusion.md
§11.1) with `StableDiffusionXLPipeline.from_pretrained` and records, in the style of pipeline_sd1.json (§13): both
tokenizers' ids, both encoders' penultimate hidden states and the pooled `text_embeds`, the pipeline's prompt
embeddings, one UNet call with the added conditioning, the VAE decode, and text2img under several schedulers.
Deterministic inputs are the harness's `det_input(name, shape, scale)` (§11.3), so the TypeScript tests rebuild them.

Usage (see README.md beside this file for the environment):
  PYTHONPATH=<site> /usr/bin/python3 sdxl_reference.py <tiny sdxl folder> <out.json>
"""
import json
import os
import shutil
import struct
import sys
import tempfile

import numpy as np
import torch

import diffusers
import transformers
from det_harness import det_input, det_uniform, fnv1a32, full, write_fixture  # noqa: F401 (re-exported)
from diffusers import (
    DDIMScheduler,
    DPMSolverMultistepScheduler,
    EulerAncestralDiscreteScheduler,
    StableDiffusionXLPipeline,
)

PROMPT = "a photo of an astronaut riding a horse on mars"
NEGATIVE = "painting"
SIZE = 32  # pixels; latents 16×16 (tiny VAE: factor 2)
STEPS = 4
GUIDANCE = 7.5


# --- fixture encoding (§13) ---
def summary(t):
    a = np.asarray(t.detach().numpy() if torch.is_tensor(t) else t, dtype=np.float64)
    flat = a.reshape(-1)
    idx = np.linspace(0, flat.size - 1, 8).astype(int)
    return {
        "shape": list(a.shape),
        "mean": float(flat.mean()),
        "std": float(flat.std()),
        "abs_sum": float(np.abs(flat).sum()),
        "first": [float(v) for v in flat[:8]],
        "probe_index": [int(i) for i in idx],
        "probe": [float(flat[i]) for i in idx],
    }


def image_fields(images):
    """A pipeline's NHWC [0, 1] images as a fixture stores them: summary, in full, and as uint8 (round(x·255))."""
    return {
        "image": summary(images),
        "image_full": full(images),
        "image_uint8": [int(v) for v in (images * 255).round().astype(np.uint8).reshape(-1)],
    }


def token_ids(tok, text):
    """A tokenizer's ids for `text` as the pipeline pads and truncates them."""
    return tok(text, padding="max_length", max_length=tok.model_max_length, truncation=True).input_ids


def harness_noise():
    """diffusers' img2img noise draws replaced by the harness's (§13): the VAE sample draws `vae-noise/<k>`, the
    img2img `add_noise` draws `pipe-noise/<k>`, each with its own counter from 0."""
    import diffusers.models.autoencoders.vae as vae_module
    import diffusers.pipelines.stable_diffusion_xl.pipeline_stable_diffusion_xl_img2img as img2img_module

    counters = {"vae-noise": 0, "pipe-noise": 0}

    def draws(prefix):
        def draw(shape, generator=None, device=None, dtype=None, layout=None):
            k = counters[prefix]
            counters[prefix] += 1
            return det_input(f"{prefix}/{k}", list(shape))

        return draw

    vae_module.randn_tensor = draws("vae-noise")
    img2img_module.randn_tensor = draws("pipe-noise")


def with_pt_format(src):
    """A copy of the folder whose encoder files carry safetensors metadata {"format": "pt"}: transformers refuses
    a safetensors file without it (files saved by torch tooling have it; Tiffin's writer writes none). Same tensors."""
    dst = tempfile.mkdtemp(prefix="tiny-sdxl-pt-")
    shutil.copytree(src, dst, dirs_exist_ok=True)
    for enc in ("text_encoder", "text_encoder_2"):
        path = os.path.join(dst, enc, "model.safetensors")
        raw = open(path, "rb").read()
        n = struct.unpack("<Q", raw[:8])[0]
        header = json.loads(raw[8 : 8 + n])
        header["__metadata__"] = {"format": "pt"}
        h = json.dumps(header).encode()
        h += b" " * ((8 - len(h) % 8) % 8)
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h + raw[8 + n :])
    return dst


def open_pipeline(folder):
    """The folder as a float32 `StableDiffusionXLPipeline` on one torch thread (reductions in one order: the numbers
    repeat exactly), and the temporary loadable copy to delete afterwards."""
    torch.set_num_threads(1)
    loadable = with_pt_format(folder)
    pipe = StableDiffusionXLPipeline.from_pretrained(loadable, torch_dtype=torch.float32)
    pipe.set_progress_bar_config(disable=True)
    return pipe, loadable


def main():
    folder, out_path = sys.argv[1], sys.argv[2]
    pipe, loadable = open_pipeline(folder)
    assert pipe.watermark is None, "the folder must not ask for a watermark"
    fx = {
        "diffusers": diffusers.__version__,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "flavour": "sdxl",
        "prompt": PROMPT,
        "negative_prompt": NEGATIVE,
        "vae_scaling_factor": pipe.vae.config.scaling_factor,
    }

    # Weights as loaded by diffusers/transformers (the folder's own keys, §11.3).
    probes = {}
    for comp, name in [
        ("text_encoder", "text_model.embeddings.token_embedding.weight"),
        ("text_encoder_2", "text_model.embeddings.token_embedding.weight"),
        ("text_encoder_2", "text_projection.weight"),
        ("unet", "add_embedding.linear_1.weight"),
        ("unet", "down_blocks.2.attentions.1.transformer_blocks.2.attn2.to_k.weight"),
        ("vae", "decoder.conv_in.weight"),
    ]:
        w = getattr(pipe, comp).state_dict()[name]
        probes[f"{comp}/{name}"] = {
            "shape": list(w.shape),
            "fnv1a32": fnv1a32(name),
            "first": [float(v) for v in w.reshape(-1)[:4]],
        }
    fx["weight_probes"] = probes

    with torch.no_grad():
        # Tokenizers: tokenizer pads with <|endoftext|>, tokenizer_2 with "!" (id 0).
        fx["token_ids"] = token_ids(pipe.tokenizer, PROMPT)
        fx["token_ids_2"] = token_ids(pipe.tokenizer_2, PROMPT)
        fx["negative_token_ids"] = token_ids(pipe.tokenizer, NEGATIVE)
        fx["negative_token_ids_2"] = token_ids(pipe.tokenizer_2, NEGATIVE)

        # Encoders on the prompt's ids: penultimate hidden states (what SDXL uses) and encoder 2's text_embeds.
        out1 = pipe.text_encoder(torch.tensor([fx["token_ids"]]), output_hidden_states=True)
        out2 = pipe.text_encoder_2(torch.tensor([fx["token_ids_2"]]), output_hidden_states=True)
        for key, t in [
            ("text_encoder_penultimate", out1.hidden_states[-2]),
            ("text_encoder_2_penultimate", out2.hidden_states[-2]),
            ("text_encoder_2_text_embeds", out2.text_embeds),
        ]:
            fx[key] = summary(t)
            fx[f"{key}_full"] = full(t)

        # The pipeline's own prompt encoding (concatenated context, pooled), with and without a negative prompt.
        pe, npe, pooled, npooled = pipe.encode_prompt(
            PROMPT, device="cpu", num_images_per_prompt=1, do_classifier_free_guidance=True, negative_prompt=NEGATIVE
        )
        fx["prompt_embeds"] = summary(pe)
        fx["negative_prompt_embeds"] = summary(npe)
        fx["pooled_prompt_embeds_full"] = full(pooled)
        fx["negative_pooled_prompt_embeds_full"] = full(npooled)
        _, zpe, _, zpooled = pipe.encode_prompt(PROMPT, device="cpu", do_classifier_free_guidance=True)
        fx["empty_negative_is_zero"] = bool(zpe.abs().max() == 0 and zpooled.abs().max() == 0)

        # One UNet call with the added conditioning (text_embeds + time_ids) on deterministic inputs.
        ctx_dim = pipe.unet.config.cross_attention_dim
        proj = pipe.text_encoder_2.config.projection_dim
        sample = det_input("unet/sample", [2, 4, 16, 16])
        context = det_input("unet/encoder_hidden_states", [2, 77, ctx_dim])
        text_embeds = det_input("unet/text_embeds", [2, proj])
        time_ids = torch.tensor([[32, 32, 0, 0, 32, 32], [24, 32, 4, 0, 32, 32]], dtype=torch.float32)
        fx["unet_inputs"] = {
            "sample": "unet/sample",
            "encoder_hidden_states": "unet/encoder_hidden_states",
            "text_embeds": "unet/text_embeds",
            "time_ids": time_ids.tolist(),
        }
        for t in (981, 1):
            y = pipe.unet(
                sample, t, encoder_hidden_states=context,
                added_cond_kwargs={"text_embeds": text_embeds, "time_ids": time_ids},
            ).sample
            fx[f"unet_t{t}"] = summary(y)
            fx[f"unet_t{t}_full"] = full(y)

        # VAE decode of deterministic latents (raw decoder output, no scaling).
        dec = pipe.vae.decode(det_input("vae/latents", [1, 4, 16, 16])).sample
        fx["vae_decode"] = summary(dec)
        fx["vae_decode_full"] = full(dec)

    # text2img: prompt + negative prompt, fixed initial latents, guidance, per scheduler (diffusers' from_config).
    base = pipe.scheduler.config
    schedulers = {
        "default": None,  # the folder's EulerDiscreteScheduler
        "euler_a": EulerAncestralDiscreteScheduler,
        "dpmpp_2m": DPMSolverMultistepScheduler,
        "ddim": DDIMScheduler,
    }
    original = pipe.scheduler
    txt = {}
    for key, cls in schedulers.items():
        pipe.scheduler = original if cls is None else cls.from_config(base)
        noise_counter = [0]
        if cls is EulerAncestralDiscreteScheduler:
            # Stochastic draws from the harness's `sched-noise/<k>` (§13) instead of torch's generator.
            import diffusers.schedulers.scheduling_euler_ancestral_discrete as ea

            def draw(shape, generator=None, device=None, dtype=None, layout=None):
                k = noise_counter[0]
                noise_counter[0] += 1
                return det_input(f"sched-noise/{k}", list(shape))

            ea.randn_tensor = draw
        res = pipe(
            prompt=PROMPT, negative_prompt=NEGATIVE, height=SIZE, width=SIZE, num_inference_steps=STEPS,
            guidance_scale=GUIDANCE, latents=det_input("pipe/latents", [1, 4, 16, 16]), output_type="latent",
        )
        latents = res.images
        with torch.no_grad():
            image = pipe.vae.decode(latents / pipe.vae.config.scaling_factor).sample
            image = pipe.image_processor.postprocess(image, output_type="np")  # NHWC in [0, 1]
        entry = {
            "scheduler": type(pipe.scheduler).__name__,
            "timesteps": [float(t) for t in pipe.scheduler.timesteps],
            "image": summary(image),
            "image_full": full(image),
            "image_uint8": [int(v) for v in (image * 255).round().astype(np.uint8).reshape(-1)],
        }
        if key in ("default", "dpmpp_2m"):
            entry["final_latents"] = full(latents)
        txt[key] = entry
    pipe.scheduler = original
    fx["txt2img"] = txt
    fx["txt2img_settings"] = {
        "height": SIZE, "width": SIZE, "num_inference_steps": STEPS, "guidance_scale": GUIDANCE,
        "latents": "pipe/latents", "add_time_ids": [SIZE, SIZE, 0, 0, SIZE, SIZE],
    }

    # No negative prompt: force_zeros_for_empty_prompt gives zero negative embeddings.
    res = pipe(
        prompt=PROMPT, height=SIZE, width=SIZE, num_inference_steps=STEPS, guidance_scale=GUIDANCE,
        latents=det_input("pipe/latents", [1, 4, 16, 16]), output_type="np",
    )
    fx["txt2img_no_negative"] = {
        "scheduler": type(pipe.scheduler).__name__,
        "image": summary(res.images),
        "image_uint8": [int(v) for v in (res.images * 255).round().astype(np.uint8).reshape(-1)],
    }

    shutil.rmtree(loadable, ignore_errors=True)
    write_fixture(fx, out_path)


if __name__ == "__main__":  # the other sdxl_*_reference.py scripts import its helpers
    main()
