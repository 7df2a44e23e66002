"""Learns the embedding rows of the words people add that no caption has and no caption word stands for ("side" in
"on the left side"): textual inversion on the shipped model. Everything else stays frozen (the UNet, the
text encoder's layers, every other row); each new word's row (zero until now) is trained with the UNet's own
v-prediction loss on the training pictures asked for in people's words (training/export-dataset.ts writes them,
`src/evaluate/phrasings.ts` says them). Only training scenes are used; the evaluator's held-out scenes never.

Single-token synonyms are tied, not learned (training/tie_synonyms.py): run that first, so their rows are not zero.
The learned rows are written into the folder's text encoder in place (float16); nothing else in the file changes.

Run (from packages/demo-model, after `npx tsx --conditions=source training/export-dataset.ts`):
  nice -n 10 /usr/bin/python3 training/learn_words.py --threads 1 --steps 300
"""

import argparse
import json
import os
import struct
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from modules import ClipTextModel, UNet2DConditionModel  # noqa: E402
from train import CACHE, HERE, VOCAB_SIZE, alphas_cumprod, fixed_latents, load_dataset, read_safetensors  # noqa: E402

TABLE = "text_model.embeddings.token_embedding.weight"


def folder_json(folder, rel):
    with open(os.path.join(folder, rel)) as f:
        return json.load(f)


def write_rows(path, rows):
    """Overwrites rows {token id: float vector} of the float16 embedding table in a safetensors file, in place."""
    with open(path, "rb") as f:
        raw = bytearray(f.read())
    n = struct.unpack("<Q", raw[:8])[0]
    entry = json.loads(raw[8 : 8 + n])[TABLE]
    assert entry["dtype"] == "F16", entry["dtype"]
    width = entry["shape"][1]
    base = 8 + n + entry["data_offsets"][0]
    for token, vector in rows.items():
        at = base + token * width * 2
        raw[at : at + width * 2] = np.asarray(vector, dtype=np.float16).tobytes()
    with open(path, "wb") as f:
        f.write(bytes(raw))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default=os.path.join(HERE, "..", "model"))
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=5e-3)
    p.add_argument("--coverage-weight", type=float, default=3.0, help="as the UNet was trained")
    p.add_argument("--high-noise", type=float, default=0.5, help="as the UNet was trained")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(3)
    rng = np.random.default_rng(3)

    images, coverage, captions, _ = load_dataset()
    people = np.fromfile(os.path.join(CACHE, "people-tokens.i32"), dtype=np.int32).reshape(-1, 77)
    folder = args.model
    weights = read_safetensors(os.path.join(folder, "text_encoder", "model.safetensors"))
    table = weights[TABLE]
    # The new words: in people's phrasings, in no caption, and still a zero row (not tied to a caption word).
    new = sorted(set(np.unique(people).tolist()) - set(np.unique(captions).tolist()))
    new = [t for t in new if float(table[t].abs().max()) == 0.0]
    vocab = {v: k for k, v in folder_json(folder, "tokenizer/vocab.json").items()}
    print(f"learning rows of {[vocab[t] for t in new]}", flush=True)
    if not new:
        return
    # Only the pictures whose people's phrasing has a new word teach it.
    use = np.flatnonzero(np.isin(people, new).any(axis=1))
    print(f"{len(use)} of {len(people)} training pictures use them", flush=True)

    text = ClipTextModel(folder_json(folder, "text_encoder/config.json"), VOCAB_SIZE)
    text.load_state_dict(weights)
    unet = UNet2DConditionModel(folder_json(folder, "unet/config.json"))
    unet.load_state_dict(read_safetensors(os.path.join(folder, "unet", "diffusion_pytorch_model.safetensors")))
    for m in (text, unet):
        m.eval()
        for q in m.parameters():
            q.requires_grad_(False)
    scaling = folder_json(folder, "vae/config.json")["scaling_factor"]
    latents = fixed_latents(images[use], coverage[use]) * scaling
    ids = torch.from_numpy(people[use].astype(np.int64))
    new_ids = torch.tensor(new)
    rows = torch.nn.Parameter(torch.zeros(len(new), table.shape[1]))
    opt = torch.optim.Adam([rows], lr=args.lr)
    ac = alphas_cumprod(folder_json(folder, "scheduler/scheduler_config.json"))
    T = len(ac)
    frozen = text.text_model.embeddings.token_embedding.weight
    t0 = time.time()
    for step in range(args.steps):
        idx = torch.from_numpy(rng.integers(0, len(use), args.batch))
        t = rng.integers(0, T, args.batch)
        high = rng.random(args.batch) < args.high_noise
        t[high] = rng.integers(T // 2, T, int(high.sum()))
        t = torch.from_numpy(t)
        x0 = latents[idx]
        noise = torch.randn_like(x0)
        a = ac[t].sqrt()[:, None, None, None]
        s = (1 - ac[t]).sqrt()[:, None, None, None]
        xt = a * x0 + s * noise
        target = a * noise - s * x0
        # The table with the learned rows in place (a functional copy, so gradients reach only `rows`).
        embedding = frozen.index_put((new_ids,), rows)
        batch_ids = ids[idx]
        x = torch.nn.functional.embedding(batch_ids, embedding) + text.text_model.embeddings.position_embedding.weight[None, :77]
        for layer in text.text_model.encoder.layers:
            x = layer(x, text.mask)
        context = text.text_model.final_layer_norm(x)
        sq = (unet(xt, t, context) - target) ** 2
        sq = torch.cat([sq[:, :3], args.coverage_weight * sq[:, 3:]], dim=1)
        loss = sq.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        for g in opt.param_groups:
            g["lr"] = args.lr * (0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * step / args.steps)))
        opt.step()
        if (step + 1) % 20 == 0:
            print(f"step {step + 1} t={time.time() - t0:.0f}s loss={loss.item():.5f} |rows|={rows.norm(dim=1).tolist()}", flush=True)
    path = os.path.join(folder, "text_encoder", "model.safetensors")
    write_rows(path, {t: rows[i].detach().numpy() for i, t in enumerate(new)})
    print(f"{path}: rows of {[vocab[t] for t in new]} learned", flush=True)


if __name__ == "__main__":
    main()
