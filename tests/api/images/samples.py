"""Real images generated with Pillow, in every accepted format, and hostile files."""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any

from PIL import Image, ImageCms

XMP = (
    b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/'
    b'22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" '
    b'dc:creator="secret-photographer"/></rdf:RDF></x:xmpmeta>'
)


def photo(width: int = 800, height: int = 600, *, corner: tuple[int, int, int] = (255, 0, 0)):
    """A white image whose top-left quarter is `corner`-coloured (to follow orientation)."""
    image = Image.new("RGB", (width, height), (255, 255, 255))
    image.paste(corner, (0, 0, width // 2, height // 2))
    return image


def encode(image: Image.Image, fmt: str, **params: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **params)
    return buffer.getvalue()


def jpeg_with_metadata(width: int = 800, height: int = 600, orientation: int = 1) -> bytes:
    """A JPEG carrying EXIF (orientation, camera, GPS), XMP, a comment and an ICC profile."""
    image = photo(width, height)
    exif = image.getexif()
    exif[0x0112] = orientation
    exif[0x010F] = "SecretCam"  # Make
    gps = exif.get_ifd(0x8825)
    gps.update({1: "N", 2: (51.0, 28.0, 40.0), 3: "W", 4: (0.0, 0.0, 5.0)})
    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    return encode(image, "JPEG", exif=exif, xmp=XMP, comment=b"secret", icc_profile=srgb)


def sample(fmt: str, width: int = 800, height: int = 600) -> bytes:
    image = photo(width, height)
    if fmt == "GIF":
        frames = [image.convert("P"), photo(width, height, corner=(0, 0, 255)).convert("P")]
        return encode(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=100)
    if fmt == "PNG":
        return encode(image.convert("RGBA"), "PNG")
    return encode(image, fmt)


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims `width` x `height` (no real pixel data follows)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 64)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def flat_png(width: int, height: int, *, colour_type: int = 0, channels: int = 1) -> bytes:
    """A real, complete zero-filled PNG of any size, compressed row by row without ever
    holding the image decoded (a 1 x 59,000,000 one is about 115 KB)."""
    packer = zlib.compressobj(9)
    row = b"\x00" * (1 + width * channels)
    rows_per_piece = max(1, 4_000_000 // len(row))
    parts, left = [], height
    while left:
        take = min(left, rows_per_piece)
        parts.append(packer.compress(row * take))
        left -= take
    parts.append(packer.flush())
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", b"".join(parts))
        + _png_chunk(b"IEND", b"")
    )


def jpeg_claiming(width: int, height: int, **params: Any) -> bytes:
    """A real 16 x 16 JPEG (ending with its EOI marker) whose frame header claims
    `width` x `height`: libjpeg would fill the missing blocks with grey."""
    data = encode(Image.new("RGB", (16, 16), (200, 10, 10)), "JPEG", **params)
    index = 2
    while data[index + 1] not in (0xC0, 0xC1, 0xC2):
        index += 2 + struct.unpack(">H", data[index + 2 : index + 4])[0]
    return data[: index + 5] + struct.pack(">HH", height, width) + data[index + 9 :]
