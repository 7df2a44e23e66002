"""Teaches the demo's text encoder the words people use for its caption words: each synonym's token embedding row
(zero until now: the word never occurs in training) becomes a copy of its caption word's row, so "a big gray square
in the middle" encodes as "a large grey square in the centre" does. Idempotent; nothing else in the file changes.

Usage: python3 training/tie_synonyms.py [model folder]   (default: model/)
"""

import json
import struct
import sys

import numpy as np

# synonym -> the caption word whose embedding it takes (each a single CLIP token, "word</w>").
SYNONYMS = {
    "big": "large",
    "huge": "large",
    "tiny": "small",
    "little": "small",
    "center": "centre",
    "middle": "centre",
    "gray": "grey",
    "upper": "top",
    "lower": "bottom",
    "violet": "purple",
    "magenta": "pink",
}
TABLE = "text_model.embeddings.token_embedding.weight"


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "model"
    with open(f"{folder}/tokenizer/vocab.json") as f:
        vocab = json.load(f)
    path = f"{folder}/text_encoder/model.safetensors"
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    entry = header[TABLE]
    assert entry["dtype"] == "F16", entry["dtype"]
    start, end = entry["data_offsets"]
    body = bytearray(raw[8 + n :])
    table = np.frombuffer(body, dtype=np.float16, count=(end - start) // 2, offset=start).reshape(entry["shape"])
    table = table.copy()
    for synonym, word in SYNONYMS.items():
        table[vocab[f"{synonym}</w>"]] = table[vocab[f"{word}</w>"]]
    body[start:end] = table.tobytes()
    with open(path, "wb") as f:
        f.write(raw[: 8 + n])
        f.write(bytes(body))
    print(f"{path}: {len(SYNONYMS)} synonym rows tied")


if __name__ == "__main__":
    main()
