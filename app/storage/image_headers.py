"""What an image's header promises, checked before any pixel is decoded, so a small file
cannot make the upload pipeline hold gigabytes or decode invented pixels.

`decode_cost` is the bytes the pipeline of app.storage.imaging will really hold at its peak
for an opened (drafted) image; `data_shortfall` says whether the file's coded data can hold
the size its header claims.
"""

from __future__ import annotations

import math
import re
import struct

from PIL import Image

POINTER_BYTES = 8  # Pillow's row pointer per line (64-bit)
_PIXEL_BYTES = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16L": 2, "I;16B": 2, "I;16N": 2}
# Bytes per pixel a decoder holds besides Pillow's image: libwebp's RGBA frame and the
# copy Pillow reads it from (pillow-heif hands its buffer over, measured: none extra).
_DECODER_BYTES = {"WEBP": 8}

# Deflate codes a 258-byte match in 2 bits at best: no PNG compresses more than 1032:1.
DEFLATE_MAX_RATIO = 1032
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}

_JPEG_HUFFMAN_DCT = {0xC0, 0xC1, 0xC2}  # baseline, extended, progressive
_JPEG_HUFFMAN_LOSSLESS = 0xC3
_JPEG_STANDALONE = {0x01, 0xD8, *range(0xD0, 0xD8)}  # TEM, SOI, RSTn: no length field
_JPEG_NEXT_MARKER = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")  # not a stuffed byte or RSTn


def image_bytes(mode: str, width: int, height: int) -> int:
    """What Pillow allocates for one image of this mode and size."""
    return height * (width * _PIXEL_BYTES.get(mode, 4) + POINTER_BYTES)


# Pillow keeps one row pointer per line and 1, 2 or 4 bytes per pixel by mode (RGB takes 4), WebP
# decodes into two buffers of its own first, a progressive JPEG keeps every DCT coefficient of the
# full-size image (2 bytes each) whatever its draft scale, and the conversion to sRGB RGB needs one
# more full-size copy (two for some transparent images). A 1 x 59,000,000 greyscale PNG of 115 KB is
# estimated at 1.28 GB (bench/README.md).
def decode_cost(
    image: Image.Image, coded_size: tuple[int, int], *, longest: int, reducing_gap: float
) -> int:
    """Peak bytes of decoding `image` (opened, drafted from `coded_size`) and making its
    variants, the first resize going to `longest` with Pillow's `reducing_gap`."""
    width, height = image.size
    decoded = image_bytes(image.mode, width, height)
    # Orientation may swap rows and columns: count the longer side's row pointers.
    rgb = width * height * 4 + max(width, height) * POINTER_BYTES
    own_buffer = width * height * _DECODER_BYTES.get(image.format or "", 0)
    working = _working_copies(image) * rgb + _resize_bytes(width, height, longest, reducing_gap)
    return decoded + own_buffer + working + _coefficients(image, coded_size)


def _resize_bytes(width: int, height: int, longest: int, reducing_gap: float) -> int:
    """Pillow's resize with a reducing gap: a whole-factor reduction, a horizontal pass,
    then the result."""
    scale = longest / max(width, height)
    if scale >= 1:
        return 0
    new_width, new_height = max(1, round(width * scale)), max(1, round(height * scale))
    factor_x = int(width / new_width / reducing_gap) or 1
    factor_y = int(height / new_height / reducing_gap) or 1
    reduced = 0
    if factor_x > 1 or factor_y > 1:
        width, height = math.ceil(width / factor_x), math.ceil(height / factor_y)
        reduced = image_bytes("RGB", width, height)
    return (
        reduced + image_bytes("RGB", new_width, height) + image_bytes("RGB", new_width, new_height)
    )


def _working_copies(image: Image.Image) -> int:
    """Full-size RGB(A) images made on the way to sRGB RGB while the decoded one lives:
    one (orientation, colour profile or mode conversion), two when transparency needs an
    RGBA image first and a flattened one after, or a profile conversion comes first."""
    mode, info = image.mode, image.info
    if mode in ("LA", "PA", "La", "RGBa") or (mode == "P" and "transparency" in info):
        return 2
    return 2 if mode == "RGBA" and info.get("icc_profile") else 1


def _coefficients(image: Image.Image, coded_size: tuple[int, int]) -> int:
    """libjpeg's whole-image coefficient buffer of a progressive JPEG (64 x 2 bytes a block)."""
    if image.format != "JPEG" or not image.info.get("progressive"):
        return 0
    sampling = [(layer[1], layer[2]) for layer in getattr(image, "layer", [])]
    return _jpeg_units(sampling, *coded_size, block=8) * 128


# A JPEG whose scan data stops early but ends with an EOI marker decodes "fine" (libjpeg fills the
# missing blocks with grey) under Pillow's strict default, so its size is checked: every 8 x 8 block
# of every component costs at least one bit of Huffman-coded data. A PNG's pixels cannot be deflated
# more than 1032 to 1. Other formats' decoders refuse short data themselves.
def data_shortfall(kind: str, data: bytes, width: int, height: int) -> bool:
    """True when the coded data is too short for `width` x `height` pixels."""
    if kind == "JPEG":
        return _jpeg_shortfall(data, width, height)
    if kind == "PNG":
        return _png_shortfall(data, width, height)
    return False


def _jpeg_shortfall(data: bytes, width: int, height: int) -> bool:
    frame: tuple[int, list[tuple[int, int]]] | None = None
    scan_bytes, position = 0, 2
    while position + 4 <= len(data):
        if data[position] != 0xFF:
            return False  # not a marker where one must be: Pillow judges the file
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker == 0xD9:  # EOI
            break
        if marker in _JPEG_STANDALONE:
            position += 2
            continue
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        segment = data[position + 4 : position + 2 + length]
        position += 2 + length
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC) and frame is None:
            frame = (marker, _jpeg_sampling(segment))
        elif marker == 0xDA:  # SOS: the entropy-coded data runs to the next marker
            found = _JPEG_NEXT_MARKER.search(data, position)
            end = found.start() if found else len(data)
            scan_bytes += end - position
            position = end
    if frame is None:
        return False
    marker, sampling = frame
    if marker in _JPEG_HUFFMAN_DCT:
        units = _jpeg_units(sampling, width, height, block=8)
    elif marker == _JPEG_HUFFMAN_LOSSLESS:
        units = _jpeg_units(sampling, width, height, block=1)
    else:  # arithmetic coding has no lower bound per block; its decoder is trusted
        return False
    return scan_bytes * 8 < units  # at least one bit per block (per sample, lossless)


def _jpeg_sampling(segment: bytes) -> list[tuple[int, int]]:
    """Each component's (horizontal, vertical) sampling factor, from a SOF segment."""
    count = segment[5] if len(segment) > 5 else 0
    factors = []
    for index in range(count):
        offset = 6 + 3 * index + 1
        if offset >= len(segment):
            break
        factors.append((max(1, segment[offset] >> 4), max(1, segment[offset] & 0x0F)))
    return factors


def _jpeg_units(sampling: list[tuple[int, int]], width: int, height: int, block: int) -> int:
    if not sampling:
        return 0
    h_max = max(h for h, _ in sampling)
    v_max = max(v for _, v in sampling)
    total = 0
    for h, v in sampling:
        component_width = math.ceil(width * h / h_max)
        component_height = math.ceil(height * v / v_max)
        total += math.ceil(component_width / block) * math.ceil(component_height / block)
    return total


def _png_shortfall(data: bytes, width: int, height: int) -> bool:
    if len(data) < 33:
        return False
    bit_depth, colour_type = data[24], data[25]
    channels = _PNG_CHANNELS.get(colour_type)
    if channels is None:
        return False
    pixel_bytes = math.ceil(width * height * channels * bit_depth / 8)
    idat, position = 0, 8
    while position + 8 <= len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        if kind == b"IDAT":
            idat += min(length, len(data) - position - 8)
        elif kind == b"IEND":
            break
        position += 12 + length
    return idat * DEFLATE_MAX_RATIO < pixel_bytes
