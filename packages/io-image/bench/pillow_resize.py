"""Pillow side of the resize benchmark: decode + resize + JPEG-encode, timed in-process."""
import io
import sys
import time

from PIL import Image

path, width, height, iterations = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
data = open(path, "rb").read()


def once():
    img = Image.open(io.BytesIO(data)).convert("RGB")
    small = img.resize((width, height), Image.LANCZOS)
    out = io.BytesIO()
    small.save(out, format="JPEG", quality=80)
    return out.getvalue()


for _ in range(3):
    once()
times = []
for _ in range(iterations):
    start = time.perf_counter()
    once()
    times.append((time.perf_counter() - start) * 1000)
times.sort()
print(f"{times[len(times) // 2]:.3f}")
