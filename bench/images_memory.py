"""Peak memory of one upload's image work for hostile and normal shapes, each in a fresh
process, beside the estimate the upload is refused by.

    .venv/bin/python bench/images_memory.py

Inputs, generated in a temporary directory (the big PNGs without ever being decoded): a
1 x 59,000,000 greyscale PNG (about 115 KB, inside the 60-megapixel limit), a 633-byte
JPEG whose header claims 7000 x 8000 (a real 16 x 16 JPEG, size patched), and, for
reference, 4000 x 3000 JPEG, HEIC and WebP photos, a 7000 x 8000 progressive JPEG and
two flat 7000 x 8000 PNGs (RGBA, and palette with transparency). Each runs
`app.storage.imaging.make_variants` with the default settings in its own process; the
figure is VmHWM minus the RSS after imports and reading the file (ru_maxrss carries over
from the parent across exec). The estimate is app.storage.image_headers.decode_cost.
"""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def tall_png(width: int, height: int, colour_type: int = 0, channels: int = 1) -> bytes:
    """A zero-filled PNG compressed row by row, never held decoded."""
    packer = zlib.compressobj(9)
    row = b"\x00" * (1 + width * channels)
    parts, rows_per_piece = [], max(1, 4_000_000 // len(row))
    piece = row * rows_per_piece
    left = height
    while left:
        take = min(left, rows_per_piece)
        parts.append(packer.compress(piece if take == rows_per_piece else row * take))
        left -= take
    parts.append(packer.flush())
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", b"".join(parts))
        + _chunk(b"IEND", b"")
    )


def claimed_jpeg(width: int, height: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (200, 10, 10)).save(buffer, "JPEG")
    data, index = buffer.getvalue(), 2
    while data[index + 1] not in (0xC0, 0xC1, 0xC2):
        index += 2 + struct.unpack(">H", data[index + 2 : index + 4])[0]
    return data[: index + 5] + struct.pack(">HH", height, width) + data[index + 9 :]


def photo(fmt: str, width: int = 4000, height: int = 3000, **params: object) -> bytes:
    from PIL import Image
    from pillow_heif import register_heif_opener

    register_heif_opener()
    buffer = io.BytesIO()
    sky = Image.linear_gradient("L").resize((width, height))
    image = Image.merge("RGB", (sky, sky.transpose(Image.Transpose.ROTATE_180), sky))
    image.save(buffer, fmt, **params)
    return buffer.getvalue()


def palette_png(width: int, height: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("P", (width, height), 3).save(buffer, "PNG", transparency=3)
    return buffer.getvalue()


CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from app.storage import imaging
from config import Config

def rss(field):
    for line in open('/proc/self/status'):
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return 0.0

data = open({path!r}, 'rb').read()
import io
stream = io.BytesIO(data)
estimate = 0.0
if hasattr(imaging, 'ImageLimits'):
    from app.storage.image_headers import decode_cost
    from PIL import Image
    probe = Image.open(io.BytesIO(data))
    coded = probe.size
    if probe.format == 'JPEG':
        probe.draft('RGB', imaging._draft_target(*coded))
    estimate = decode_cost(probe, coded, longest=imaging.LARGEST,
                           reducing_gap=imaging.REDUCING_GAP) / 2**20
    probe.close()
base = rss('VmRSS')
start = time.perf_counter()
try:
    if hasattr(imaging, 'ImageLimits'):
        limits = imaging.ImageLimits(
            Config.IMAGE_MAX_PIXELS, Config.IMAGE_MAX_ASPECT_RATIO, Config.IMAGE_MAX_DECODE_BYTES
        )
        imaging.make_variants(stream, limits)
    else:  # the code before the hardening
        imaging.make_variants(stream, max_pixels=Config.IMAGE_MAX_PIXELS)
    outcome = 'accepted'
except imaging.ImageRejected as error:
    outcome = 'refused: ' + str(error)
print(json.dumps({{'outcome': outcome, 'seconds': time.perf_counter() - start,
                  'peak_mib': rss('VmHWM') - base, 'estimate_mib': estimate}}))
"""


def main() -> None:
    inputs = {
        "PNG 1 x 59,000,000 (L)": lambda: tall_png(1, 59_000_000),
        "JPEG claiming 7000 x 8000": lambda: claimed_jpeg(7000, 8000),
        "JPEG photo 4000 x 3000": lambda: photo("JPEG", quality=90),
        "JPEG progressive 7000 x 8000": lambda: photo("JPEG", 7000, 8000, progressive=True),
        "HEIC photo 4000 x 3000": lambda: photo("HEIF"),
        "WebP photo 4000 x 3000": lambda: photo("WEBP"),
        "PNG 7000 x 8000 (RGBA)": lambda: tall_png(7000, 8000, colour_type=6, channels=4),
        "PNG 7000 x 8000 (palette, transparent)": lambda: palette_png(7000, 8000),
    }
    with tempfile.TemporaryDirectory() as directory:
        for label, make in inputs.items():
            path = Path(directory) / "input"
            data = make()
            path.write_bytes(data)
            began = time.perf_counter()
            found = subprocess.run(
                [sys.executable, "-c", CHILD.format(root=str(ROOT), path=str(path))],
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(found.stdout.strip().splitlines()[-1])
            print(
                f"| {label} | {len(data):,} | {result['outcome']} | "
                f"{result['seconds']:.2f} | {result['peak_mib']:.0f} | "
                f"{result['estimate_mib']:.0f} |"
                f"  (process {time.perf_counter() - began:.1f} s)"
            )


if __name__ == "__main__":
    main()
