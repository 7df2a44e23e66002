"""LoRA reference numbers for the tiny SDXL pipeline from diffusers' own models (dev-only; never a runtime dependency).

diffusers 0.27 loads SDXL LoRAs only through PEFT, which is not installed here, so this applies the §9.3 merge
`W += (alpha / r) · up @ down` (scale 1) itself, to the modules of diffusers' `StableDiffusionXLPipeline` that the
kohya names denote (`lora_unet_*` → unet, `lora_te1_*` → text_encoder, `lora_te2_*` → text_encoder_2), reached by
attribute path rather than by any name mapping, then runs text2img. The LoRA tensors are the harness's
`det_input("sdxl-lora/<target>.down" | ".up", shape, 0.3)`, rank 2, alpha 2 (test/lora/sdxl-lora.test.ts writes
the same file).

Usage (environment: README.md beside this file):
  PYTHONPATH=<site> /usr/bin/python3 sdxl_lora_reference.py <tiny sdxl folder> <out.json>
"""
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diffusers  # noqa: E402
from diffusers import StableDiffusionXLPipeline  # noqa: E402
from sdxl_reference import NEGATIVE, PROMPT, det_input, image_fields, with_pt_format, write_fixture  # noqa: E402

RANK = 2
STEPS = 3


def main():
    folder, out_path = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    loadable = with_pt_format(folder)
    pipe = StableDiffusionXLPipeline.from_pretrained(loadable, torch_dtype=torch.float32)
    pipe.set_progress_bar_config(disable=True)
    # target → (kohya key, diffusers module)
    targets = {
        "unet_attn2_k": (
            "lora_unet_down_blocks_1_attentions_0_transformer_blocks_0_attn2_to_k",
            pipe.unet.down_blocks[1].attentions[0].transformer_blocks[0].attn2.to_k,
        ),
        "unet_add_embedding": ("lora_unet_add_embedding_linear_1", pipe.unet.add_embedding.linear_1),
        "te1_q": (
            "lora_te1_text_model_encoder_layers_0_self_attn_q_proj",
            pipe.text_encoder.text_model.encoder.layers[0].self_attn.q_proj,
        ),
        "te2_fc1": (
            "lora_te2_text_model_encoder_layers_1_mlp_fc1",
            pipe.text_encoder_2.text_model.encoder.layers[1].mlp.fc1,
        ),
    }
    keys = {}
    with torch.no_grad():
        for name, (key, module) in targets.items():
            out, inp = module.weight.shape
            down = det_input(f"sdxl-lora/{name}.down", [RANK, inp], 0.3)
            up = det_input(f"sdxl-lora/{name}.up", [out, RANK], 0.3)
            module.weight += (RANK / RANK) * (up @ down)
            keys[name] = key
        res = pipe(
            prompt=PROMPT, negative_prompt=NEGATIVE, height=32, width=32, num_inference_steps=STEPS,
            latents=det_input("pipe/latents", [1, 4, 16, 16]), output_type="np",
        )
    fx = {
        "diffusers": diffusers.__version__,
        "torch": torch.__version__,
        "prompt": PROMPT,
        "negative_prompt": NEGATIVE,
        "settings": {"num_inference_steps": STEPS, "guidance_scale": 5.0, "latents": "pipe/latents", "size": 32},
        "rank": RANK,
        "alpha": RANK,
        "scale": 1.0,
        "targets": keys,
        **image_fields(res.images),
    }
    shutil.rmtree(loadable, ignore_errors=True)
    write_fixture(fx, out_path)


main()
