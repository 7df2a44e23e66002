"""Canny edge maps from OpenCV's own `cv2.Canny`, the call A1111's ControlNet extension makes on an RGB picture.

Writes `test/fixtures/controlnet/canny.json`: for each case its picture (RGB, base64; or `rgbOf`, the
earlier case with the same picture), thresholds and OpenCV's
edge map (one channel, 0/255, base64). The pictures are built here from numpy's seeded generator, so the file is
self-contained; `test/service/controlnet-canny.test.ts` runs Tiffin's `cannyEdges` on each picture and compares.

    /usr/bin/python3 reference/canny_reference.py test/fixtures/controlnet/canny.json

Needs Debian's `python3-opencv` (4.6) and numpy; a second, identical run writes an identical file.
"""

import base64
import json
import sys

import cv2
import numpy as np


def b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype=np.uint8).tobytes()).decode("ascii")


def gradient(height: int, width: int) -> np.ndarray:
    y, x = np.mgrid[0:height, 0:width]
    r = (x * 255 // max(1, width - 1)).astype(np.uint8)
    g = (y * 255 // max(1, height - 1)).astype(np.uint8)
    b = ((x + y) * 7 % 256).astype(np.uint8)
    return np.stack([r, g, b], axis=-1)


def shapes(height: int, width: int) -> np.ndarray:
    img = np.full((height, width, 3), 30, dtype=np.uint8)
    cv2.rectangle(img, (8, 6), (width // 2, height // 2), (220, 40, 40), -1)
    cv2.circle(img, (width * 2 // 3, height * 2 // 3), min(height, width) // 4, (40, 200, 90), -1)
    cv2.line(img, (0, height - 1), (width - 1, 0), (250, 250, 250), 2)
    # A shape that differs in one channel only: edges from the blue channel alone.
    cv2.rectangle(img, (width // 3, height * 3 // 4), (width - 4, height - 3), (30, 30, 160), -1)
    return img


def photo_like(height: int, width: int, seed: int) -> np.ndarray:
    """Smooth blobs plus sensor noise: many weak gradients, where the thresholds and hysteresis matter."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, size=(height // 8 + 2, width // 8 + 2, 3), dtype=np.uint8)
    smooth = cv2.resize(coarse, (width, height), interpolation=cv2.INTER_LINEAR)
    noise = rng.normal(0, 12, size=(height, width, 3))
    return np.clip(smooth.astype(np.float64) + noise, 0, 255).astype(np.uint8)


def cases():
    rng = np.random.default_rng(60)
    photo = photo_like(96, 128, 1)
    yield "gradient-64x48", gradient(48, 64), 100, 200
    yield "shapes-80x64", shapes(64, 80), 100, 200
    yield "shapes-low-thresholds", shapes(64, 80), 10, 30
    yield "photo-128x96", photo, 100, 200
    yield "photo-low-50-120", photo, 50, 120
    yield "photo-swapped-200-100", photo, 200, 100
    yield "photo-fractional-thresholds", photo, 40.7, 90.2
    yield "photo-zero-thresholds", photo, 0, 0
    yield "non-square-37x11", photo_like(11, 37, 2), 60, 140
    yield "tall-7x45", photo_like(45, 7, 3), 60, 140
    yield "noise-32x32", rng.integers(0, 256, size=(32, 32, 3), dtype=np.uint8), 100, 200
    yield "tiny-1x1", np.array([[[200, 10, 30]]], dtype=np.uint8), 100, 200
    yield "tiny-2x2", np.array([[[0, 0, 0], [255, 255, 255]], [[255, 0, 0], [0, 0, 255]]], dtype=np.uint8), 100, 200
    yield "tiny-3x2-zero", np.array([[[0, 0, 0], [255, 255, 255], [9, 9, 9]]] * 2, dtype=np.uint8), 0, 0


def main(out_path: str) -> None:
    out = {
        "provenance": f"cv2.Canny(rgb, low, high) of OpenCV {cv2.__version__} (aperture 3, L1 gradient), "
        "reference/canny_reference.py",
        "cases": [],
    }
    pictures = {}
    for name, image, low, high in cases():
        edges = cv2.Canny(np.ascontiguousarray(image), low, high)
        # A picture several cases share is written once; the later cases name the first (`rgbOf`).
        key = (image.shape, image.tobytes())
        picture = {"rgbOf": pictures[key]} if key in pictures else {"rgb": b64(image)}
        pictures.setdefault(key, name)
        out["cases"].append(
            {
                "name": name,
                "width": int(image.shape[1]),
                "height": int(image.shape[0]),
                "low": low,
                "high": high,
                **picture,
                "edges": b64(edges),
                "edgePixels": int((edges > 0).sum()),
            }
        )
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
