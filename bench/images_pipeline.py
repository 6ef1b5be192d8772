"""Time and peak memory of the image pipeline against a floor, interleaved.

    .venv/bin/python bench/images_pipeline.py            # 20 runs of each, both inputs
    .venv/bin/python bench/images_pipeline.py --runs 40

Inputs, generated once into a temporary directory: a 12-megapixel (4000x3000) photo-like
JPEG (gradients, soft shapes, grain; quality 90, EXIF orientation 1) and the same picture
as a 4032x3024 HEIC. Contenders, each in a fresh process per run so that peak memory is
its own (VmHWM minus the RSS after imports and before the work):

- `api`: `app.storage.imaging.make_variants`, what an upload runs (screening, pixel
  limit, draft decode, cascade, orientation, sRGB, metadata stripped, encoding);
- `floor`: the same four variants with bare Pillow: draft decode, the cascade, encoding
  with the same JPEG settings, nothing else;
- `naive`: full decode, then each variant resized from the full image (for reference).

Runs are interleaved (api, floor, naive, then rotated) so all see the same machine state.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"large": 1024, "medium": 612, "small": 306}


def photo_like(width: int, height: int) -> Any:
    """A photo-like picture (a PIL image): gradients, soft shapes, sensor-like grain, so
    that decoding and encoding it cost what a real photo's do (bench/uploads_under_load.py
    and bench/mixed_load.py upload it too)."""
    from PIL import Image, ImageDraw, ImageFilter

    sky = Image.linear_gradient("L").resize((width, height))
    red = sky.point(lambda v: 90 + v // 2)
    green = Image.radial_gradient("L").resize((width, height)).point(lambda v: 60 + v // 3)
    blue = sky.transpose(Image.Transpose.FLIP_TOP_BOTTOM).point(lambda v: 120 + v // 3)
    image = Image.merge("RGB", (red, green, blue))
    draw = ImageDraw.Draw(image)
    for index in range(60):  # soft "objects"
        x, y = (index * 7919) % width, (index * 104729) % height
        r = 40 + (index * 37) % 300
        draw.ellipse((x - r, y - r, x + r, y + r), fill=((index * 53) % 255, 120, 90))
    image = image.filter(ImageFilter.GaussianBlur(3))
    grain = Image.effect_noise((width, height), 24).convert("RGB")
    return Image.blend(image, grain, 0.12)  # sensor-like grain: real entropy


def make_inputs(directory: Path) -> dict[str, Path]:
    from pillow_heif import register_heif_opener

    register_heif_opener()
    jpeg, heic = directory / "photo-12mp.jpg", directory / "photo-4032x3024.heic"
    photo_like(4000, 3000).save(jpeg, "JPEG", quality=90)
    photo_like(4032, 3024).save(heic, "HEIF", quality=85)
    return {"jpeg-12mp": jpeg, "heic-4032x3024": heic}


def status_kib(field: str) -> int:
    """VmRSS (now) or VmHWM (peak) of this process. Not ru_maxrss: Linux carries it over
    from the parent across exec, so a child would report the parent's peak."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def one_run(contender: str, path: Path) -> dict[str, float]:
    """Runs in a child process: one contender on one file."""
    sys.path.insert(0, str(ROOT))
    from PIL import Image, ImageOps
    from pillow_heif import register_heif_opener

    from app.storage import imaging

    register_heif_opener()
    data = path.read_bytes()
    base = status_kib("VmRSS")
    started = time.perf_counter()
    if contender == "api":
        limits = imaging.ImageLimits(60_000_000, 50.0, 640 * 1024 * 1024)
        imaging.make_variants(io.BytesIO(data), limits)
    else:
        image = Image.open(io.BytesIO(data))
        if contender == "floor" and image.format == "JPEG":
            width, height = image.size
            scale = 1024 / max(width, height)
            image.draft("RGB", (int(width * scale) + 1, int(height * scale) + 1))
        image = image.convert("RGB")
        made = {}
        source = image
        for name, size in SIZES.items():
            fitted = source.copy() if contender == "naive" else source
            if max(fitted.size) > size:
                scale = size / max(fitted.size)
                fitted = fitted.resize(
                    (round(fitted.width * scale), round(fitted.height * scale)),
                    Image.Resampling.LANCZOS,
                    reducing_gap=3.0,
                )
            made[name] = fitted
            if contender == "floor":
                source = fitted  # the cascade
        made["thumbnail"] = ImageOps.fit(
            made["small"] if contender == "floor" else image, (64, 64), Image.Resampling.LANCZOS
        )
        for each in made.values():
            each.save(io.BytesIO(), "JPEG", quality=82, subsampling=2, progressive=True)
    seconds = time.perf_counter() - started
    peak = status_kib("VmHWM")
    return {"seconds": seconds, "peak_kib": max(0, peak - base)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--one", nargs=2, metavar=("CONTENDER", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_run(args.one[0], Path(args.one[1]))))
        return
    contenders = ["api", "floor", "naive"]
    with tempfile.TemporaryDirectory() as directory:
        inputs = make_inputs(Path(directory))
        results: dict[tuple[str, str], list[dict[str, float]]] = {}
        for run in range(args.runs):
            for label, path in inputs.items():
                shift = run % len(contenders)
                for contender in contenders[shift:] + contenders[:shift]:
                    output = subprocess.run(
                        [sys.executable, __file__, "--one", contender, str(path)],
                        check=True,
                        capture_output=True,
                        text=True,
                        env={**os.environ, "PYTHONWARNINGS": "ignore"},
                    ).stdout
                    results.setdefault((label, contender), []).append(json.loads(output))
    print(f"{args.runs} interleaved runs each, one process per run")
    print(f"{'input':16} {'contender':9} {'p50 ms':>8} {'p90 ms':>8} {'peak MiB':>9}  vs floor")
    for label in inputs:
        floor = results[(label, "floor")]
        floor_p50 = statistics.median(r["seconds"] for r in floor)
        floor_peak = statistics.median(r["peak_kib"] for r in floor)
        for contender in contenders:
            runs = results[(label, contender)]
            times = sorted(r["seconds"] for r in runs)
            p50 = statistics.median(times)
            p90 = times[int(0.9 * (len(times) - 1))]
            peak = statistics.median(r["peak_kib"] for r in runs)
            print(
                f"{label:16} {contender:9} {p50 * 1000:8.0f} {p90 * 1000:8.0f} "
                f"{peak / 1024:9.1f}  time x{p50 / floor_p50:.2f}, memory x{peak / floor_peak:.2f}"
            )


if __name__ == "__main__":
    main()
