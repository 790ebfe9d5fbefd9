#!/usr/bin/env python3
"""Writes the image test data of tests/image/test_image.cpp with PIL (Debian's python3-pil, the
library transformers' Gemma3ImageProcessor resizes with):

    /usr/bin/python3 tests/tools/image_reference.py

- Source pictures (noise, patterns; odd sizes) as PNG, and what PIL's
  Image.resize((w, h), BILINEAR) makes of them: the raw RGB bytes for outputs up to 64x64, else an
  FNV-1a 64 hash of all bytes plus sampled pixels (an 896x896 output is 2.4 MB).
- Files of every supported layout (PNG 8/16-bit, grey, palette, alpha, interlaced; JPEG baseline,
  progressive, grey, CMYK; WebP lossy, lossless, alpha) with PIL's decoded RGB
  (ImageOps.exif_transpose, then convert("RGB"), as transformers loads and converts a picture).
- JPEGs (and a PNG and a WebP) with each Exif orientation 1..8, with PIL's upright pixels.
- tests/data/vision/wide.png through the whole Gemma 3 preprocessing (resize to 64, rescale by
  1/255 in float64, float32 (x - 0.5) / 0.5) as float32.
Everything lands in tests/data/images/ (reference.json and its files). Deterministic (seeded).
"""
import io, json, os, struct, sys, zlib

import numpy as np
from PIL import Image, ImageOps

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
OUT = os.path.join(ROOT, "images")
rng = np.random.default_rng(22)


def fnv1a64(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def save(name, data: bytes):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def write_png(samples: np.ndarray, color_type: int, depth: int, interlace=False) -> bytes:
    """A PNG PIL cannot write (16-bit colour, 4-bit grey, Adam7): samples [h][w][channels]."""
    h, w = samples.shape[:2]

    def rows(img):
        out = b""
        for row in img:
            if depth == 16:
                raw = row.astype(">u2").tobytes()
            elif depth < 8:
                flat = row.reshape(-1)
                per = 8 // depth
                flat = np.concatenate([flat, np.zeros((-len(flat)) % per, np.uint8)])
                packed = np.zeros(len(flat) // per, np.uint8)
                for i in range(per):
                    packed |= (flat[i::per] << (8 - depth * (i + 1))).astype(np.uint8)
                raw = packed.tobytes()
            else:
                raw = row.astype(np.uint8).tobytes()
            out += b"\x00" + raw
        return out

    if interlace:
        data = b""
        for x0, y0, dx, dy in [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]:
            sub = samples[y0::dy, x0::dx]
            if sub.shape[0] and sub.shape[1]:
                data += rows(sub)
    else:
        data = rows(samples)
    ihdr = struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 1 if interlace else 0)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", zlib.compress(data, 9)) + png_chunk(b"IEND", b"")


def pil_rgb(data: bytes) -> Image.Image:
    return ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("RGB")


def smooth_picture(w, h):
    """Gradients with some noise: a photo-like picture for the lossy codecs."""
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), (x * 7 + y * 13) % 256], -1)
    return np.clip(base + rng.integers(-20, 21, base.shape), 0, 255).astype(np.uint8)


def resize_cases():
    sources = {
        "noise_150x90.png": rng.integers(0, 256, (90, 150, 3), dtype=np.uint8),
        "noise_97x61.png": rng.integers(0, 256, (61, 97, 3), dtype=np.uint8),
        "noise_1x1.png": rng.integers(0, 256, (1, 1, 3), dtype=np.uint8),
        "noise_3x1000.png": rng.integers(0, 256, (1000, 3, 3), dtype=np.uint8),
    }
    y, x = np.mgrid[0:1500, 0:2000]
    sources["pattern_2000x1500.png"] = np.stack(
        [x * 255 // 1999, y * 255 // 1499, ((x // 3 + y // 2) % 7) * 36], -1).astype(np.uint8)
    for name, a in sources.items():
        buf = io.BytesIO()
        Image.fromarray(a, "RGB").save(buf, "PNG", optimize=True)
        save(name, buf.getvalue())
    targets = {
        "noise_150x90.png": [(64, 64), (896, 896), (64, 32), (151, 90), (150, 45)],
        "noise_97x61.png": [(64, 64)],
        "noise_1x1.png": [(64, 64), (896, 896)],
        "noise_3x1000.png": [(64, 64), (896, 896)],
        "pattern_2000x1500.png": [(64, 64), (896, 896)],
        "../vision/wide.png": [(64, 64)],
        "../vision/exact.png": [(64, 64)],
    }
    cases = []
    for name, sizes in targets.items():
        im = Image.open(os.path.join(OUT, name)).convert("RGB")
        for w, h in sizes:
            out = np.asarray(im.resize((w, h), resample=Image.BILINEAR))
            case = {"source": name, "width": w, "height": h, "fnv1a64": fnv1a64(out.tobytes())}
            if w * h <= 64 * 64:
                case["expected"] = "%s_%dx%d.rgb" % (os.path.basename(name)[:-4], w, h)
                save(case["expected"], out.tobytes())
            ys, xs = rng.integers(0, h, 48), rng.integers(0, w, 48)
            case["samples"] = [[int(a), int(b)] + out[b, a].tolist() for a, b in zip(xs, ys)]
            cases.append(case)
    return cases


def decode_cases():
    pic = smooth_picture(40, 24)
    alpha = rng.integers(0, 256, (24, 40), dtype=np.uint8)
    alpha[0, :] = 0
    files = {}

    def pil_save(im, fmt, **kw):
        buf = io.BytesIO()
        im.save(buf, fmt, **kw)
        return buf.getvalue()

    rgb = Image.fromarray(pic, "RGB")
    rgba = Image.fromarray(np.dstack([pic, alpha]), "RGBA")
    grey = rgb.convert("L")
    files["png_rgb8.png"] = pil_save(rgb, "PNG")
    files["png_rgba8.png"] = pil_save(rgba, "PNG")
    files["png_grey8.png"] = pil_save(grey, "PNG")
    files["png_grey_alpha8.png"] = pil_save(Image.merge("LA", [grey, Image.fromarray(alpha)]), "PNG")
    files["png_palette.png"] = pil_save(rgb.quantize(37), "PNG", transparency=3)
    files["png_grey1.png"] = pil_save(grey.convert("1"), "PNG")
    files["png_grey4.png"] = write_png((np.asarray(grey) >> 4)[..., None], 0, 4)
    wide = pic.astype(np.uint16) * 257 + rng.integers(0, 257, pic.shape).astype(np.uint16)
    files["png_rgb16.png"] = write_png(wide, 2, 16)
    files["png_rgba16.png"] = write_png(np.dstack([wide, alpha.astype(np.uint16) * 257]), 6, 16)
    files["png_grey16.png"] = write_png(wide[..., :1], 0, 16)
    files["png_rgb8_interlaced.png"] = write_png(pic, 2, 8, interlace=True)
    files["jpeg_baseline.jpg"] = pil_save(rgb, "JPEG", quality=90)
    files["jpeg_444.jpg"] = pil_save(rgb, "JPEG", quality=95, subsampling=0)
    files["jpeg_progressive.jpg"] = pil_save(rgb, "JPEG", quality=85, progressive=True)
    files["jpeg_grey.jpg"] = pil_save(grey, "JPEG", quality=90)
    files["jpeg_cmyk.jpg"] = pil_save(rgb.convert("CMYK"), "JPEG", quality=90)
    files["webp_lossy.webp"] = pil_save(rgb, "WEBP", quality=80)
    files["webp_lossless.webp"] = pil_save(rgb, "WEBP", lossless=True)
    files["webp_lossy_alpha.webp"] = pil_save(rgba, "WEBP", quality=80)

    def orientation(n):
        exif = Image.Exif()
        exif[0x0112] = n
        return exif.tobytes()

    for n in range(1, 9):
        files["exif_%d.jpg" % n] = pil_save(rgb, "JPEG", quality=90, exif=orientation(n))
    files["exif_6.png"] = pil_save(rgb, "PNG", exif=orientation(6))
    files["exif_8.webp"] = pil_save(rgb, "WEBP", lossless=True, exif=orientation(8))

    cases = []
    for name, data in files.items():
        save(name, data)
        if name == "png_grey16.png":
            # PIL opens 16-bit grey as mode "I" and clips it to 0..255 in convert("RGB"); Kiln keeps
            # the high byte like every other 16-bit layout, so the expectation is made here.
            out = np.repeat((wide[..., :1] >> 8).astype(np.uint8), 3, axis=2)
        else:
            out = np.asarray(pil_rgb(data))
        expected = name + ".rgb"
        save(expected, out.tobytes())
        cases.append({"file": name, "width": out.shape[1], "height": out.shape[0], "expected": expected})
    return cases


def tower_case():
    im = Image.open(os.path.join(ROOT, "vision", "wide.png")).convert("RGB")
    # Gemma3ImageProcessor: resize, rescale (float64 * 1/255, cast to float32), normalize in float32.
    a = np.asarray(im.resize((64, 64), resample=Image.BILINEAR))
    a = (a.astype(np.float64) * (1 / 255)).astype(np.float32)
    a = (a - np.array([0.5] * 3, np.float32)) / np.array([0.5] * 3, np.float32)
    save("wide_tower_64.f32", np.ascontiguousarray(a.transpose(2, 0, 1)).astype("<f4").tobytes())
    return {"source": "../vision/wide.png", "size": 64, "mean": [0.5] * 3, "std": [0.5] * 3, "expected": "wide_tower_64.f32"}


def main():
    os.makedirs(OUT, exist_ok=True)
    reference = {"generator": "tests/tools/image_reference.py", "pil": Image.__version__,
                 "resize": resize_cases(), "decode": decode_cases(), "tower": tower_case()}
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump(reference, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
