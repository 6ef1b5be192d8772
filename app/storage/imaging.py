"""The image pipeline (decisions: Images): screen an upload, then make the four JPEG variants.

Pure functions over a file object; nothing here touches the database or the file store.
Screening trusts the magic bytes only (never the file name or the client's content type).
Decompression bombs and lying headers are refused before any pixel is decoded
(app.storage.image_headers), and truncated data is never filled in. The output holds no
metadata at all (EXIF, GPS, XMP, ICC, comments): orientation and colour profile are applied
to the pixels instead.
"""

from __future__ import annotations

import io
import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from PIL import Image, ImageCms, ImageFile, ImageOps, UnidentifiedImageError

from app.error_codes import Code
from app.storage.image_headers import data_shortfall, decode_cost

try:  # HEIC/HEIF through pillow-heif (a declared dependency; optional only for tooling)
    from pillow_heif import register_heif_opener

    register_heif_opener()
    HEIF_AVAILABLE = True
except ImportError:  # pragma: no cover - the dependency is installed with the app
    HEIF_AVAILABLE = False

# Quality 82 with 4:2:0 chroma: visually clean photos at about a third of quality 95's
# bytes; progressive so a slow phone connection shows the whole picture early.
JPEG_QUALITY = 82
JPEG_SUBSAMPLING = 2  # Pillow's code for 4:2:0


@dataclass(frozen=True)
class Variant:
    name: str  # API name
    url_name: str  # website URL segment
    size: int  # longest side; the thumbnail is a size x size square


VARIANTS: tuple[Variant, ...] = (
    Variant("thumbnail", "Thumbnail", 64),
    Variant("small", "Small", 306),
    Variant("medium", "Medium", 612),
    Variant("large", "Large", 1024),
)
VARIANTS_BY_NAME = {variant.name: variant for variant in VARIANTS}
VARIANTS_BY_URL_NAME = {variant.url_name: variant for variant in VARIANTS}
LARGEST = max(variant.size for variant in VARIANTS)
THUMBNAIL = VARIANTS_BY_NAME["thumbnail"]

HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}


# Pillow's resize first reduces by a whole factor to within this many times the target.
REDUCING_GAP = 3.0

MEMORY_LIMIT = Code.IMAGE_MEMORY_LIMIT
ASPECT_RATIO = Code.IMAGE_ASPECT_RATIO
TRUNCATED = Code.IMAGE_TRUNCATED


class ImageRejected(ValueError):
    """The upload is not an image this service accepts; the message says why, `code` (when
    set) is the machine-readable reason."""

    def __init__(self, message: str, code: Code | None = None) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ImageLimits:
    max_pixels: int
    max_aspect_ratio: float  # longest side over shortest side
    max_decode_bytes: int  # peak memory of decoding and resizing one image


@dataclass(frozen=True)
class ProcessedImage:
    original_width: int  # after orientation
    original_height: int
    variants: dict[str, bytes]  # variant name -> JPEG bytes


# JPEG, PNG, WebP, GIF and HEIC/HEIF are accepted, anything else is refused.
def sniff_format(head: bytes) -> str | None:
    """The Pillow format name the magic bytes announce, or None."""
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "GIF"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    if head[4:8] == b"ftyp" and head[8:12] in HEIF_BRANDS:
        return "HEIF"
    return None


@contextmanager
def _pixel_limit(max_pixels: int) -> Iterator[None]:
    # Pillow warns above MAX_IMAGE_PIXELS and raises above twice that; with the warning
    # made an error, anything over the limit is refused while only the header is read.
    # Truncated data must raise, never be filled in, whatever else set the global.
    previous = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = max_pixels
    ImageFile.LOAD_TRUNCATED_IMAGES = False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            yield
    finally:
        Image.MAX_IMAGE_PIXELS = previous


# Pillow reads the size before decoding, and Image.MAX_IMAGE_PIXELS is set to the limit with its
# warning turned into a refusal, so nothing larger than max_pixels is ever decoded. The header is
# also held to max_aspect_ratio, to what its data can hold, and to max_decode_bytes of memory;
# ImageFile.LOAD_TRUNCATED_IMAGES stays off.
def open_screened(stream: IO[bytes], limits: ImageLimits) -> Image.Image:
    """The image, opened (header read, pixels not decoded) after screening, or ImageRejected."""
    max_pixels = limits.max_pixels
    stream.seek(0)
    kind = sniff_format(stream.read(16))
    stream.seek(0)
    if kind is None:
        raise ImageRejected("The file is not a JPEG, PNG, WebP, GIF or HEIC/HEIF image.")
    if kind == "HEIF" and not HEIF_AVAILABLE:  # pragma: no cover - see the import above
        raise ImageRejected("HEIC/HEIF images cannot be read on this server.")
    try:
        with _pixel_limit(max_pixels):
            image = Image.open(stream, formats=[kind])
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as error:
        raise ImageRejected(f"The image has more than {max_pixels:,} pixels.") from error
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as error:
        raise ImageRejected("The image is broken or not what its first bytes say.") from error
    try:
        _check_shape(image, stream, kind, limits)
    except ImageRejected:
        image.close()
        raise
    return image


def _check_shape(image: Image.Image, stream: IO[bytes], kind: str, limits: ImageLimits) -> None:
    width, height = image.size
    if width < 1 or height < 1 or width * height > limits.max_pixels:
        raise ImageRejected(f"The image has more than {limits.max_pixels:,} pixels.")
    if max(width, height) > limits.max_aspect_ratio * min(width, height):
        raise ImageRejected(
            f"The image is {width} x {height}: one side may be at most "
            f"{limits.max_aspect_ratio:g} times the other.",
            code=ASPECT_RATIO,
        )
    stream.seek(0)
    data = stream.read()
    stream.seek(0)
    if data_shortfall(kind, data, width, height):
        raise ImageRejected(
            f"The image is truncated: {len(data):,} bytes cannot hold {width} x {height} pixels.",
            code=TRUNCATED,
        )


def _check_memory(image: Image.Image, coded_size: tuple[int, int], limit: int) -> None:
    needed = decode_cost(image, coded_size, longest=LARGEST, reducing_gap=REDUCING_GAP)
    if needed > limit:
        mib = 1024 * 1024
        raise ImageRejected(
            f"Decoding this {coded_size[0]} x {coded_size[1]} {image.mode} image would take "
            f"about {math.ceil(needed / mib):,} MiB of memory; at most {limit // mib:,} MiB "
            "is allowed.",
            code=MEMORY_LIMIT,
        )


def _oriented_size(image: Image.Image, size: tuple[int, int]) -> tuple[int, int]:
    """`size` (the coded one, before any draft), swapped when the EXIF orientation turns it."""
    orientation = image.getexif().get(0x0112, 1)
    width, height = size
    return (height, width) if orientation in (5, 6, 7, 8) else (width, height)


def _draft_target(width: int, height: int) -> tuple[int, int]:
    """The smallest size that still covers the large variant and a full thumbnail side."""
    scale = min(1.0, max(LARGEST / max(width, height), THUMBNAIL.size / min(width, height)))
    return max(1, int(width * scale + 0.999)), max(1, int(height * scale + 0.999))


def _to_srgb(image: Image.Image) -> Image.Image:
    """RGB in sRGB: an embedded profile is converted, transparency flattened on white."""
    icc = image.info.get("icc_profile")
    if icc and image.mode in ("RGB", "RGBA", "CMYK", "L", "LA"):
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            mode = "RGBA" if image.mode in ("RGBA", "LA") else "RGB"
            if image.mode == "LA":
                image = image.convert("RGBA")
            converted = ImageCms.profileToProfile(
                image, source, ImageCms.createProfile("sRGB"), outputMode=mode
            )
            if converted is not None:
                image = converted
        except (ImageCms.PyCMSError, OSError, ValueError):
            pass  # a broken profile: the pixels are taken as sRGB already
    has_alpha = image.mode in ("RGBA", "LA", "PA") or (
        image.mode == "P" and "transparency" in image.info
    )
    if has_alpha:
        # convert() to the same mode would copy the whole image for nothing
        rgba = image if image.mode == "RGBA" else image.convert("RGBA")
        flat = Image.new("RGB", rgba.size, (255, 255, 255))
        flat.paste(rgba, mask=rgba.getchannel("A"))
        return flat
    return image if image.mode == "RGB" else image.convert("RGB")


def _fit(image: Image.Image, longest: int) -> Image.Image:
    """Longest side at most `longest`, aspect kept, never enlarged."""
    width, height = image.size
    if max(width, height) <= longest:
        return image
    scale = longest / max(width, height)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return image.resize(size, Image.Resampling.LANCZOS, reducing_gap=REDUCING_GAP)


def _square(image: Image.Image, side: int) -> Image.Image:
    """The centre square, scaled to side x side (enlarged when the source is smaller)."""
    return ImageOps.fit(image, (side, side), Image.Resampling.LANCZOS)


def _encode(image: Image.Image) -> bytes:
    image.info = {}  # nothing of the source's metadata (comment, XMP, ...) may be written
    buffer = io.BytesIO()
    image.save(
        buffer,
        "JPEG",
        quality=JPEG_QUALITY,
        subsampling=JPEG_SUBSAMPLING,
        progressive=True,
        optimize=False,
    )
    return buffer.getvalue()


def _decode(image: Image.Image) -> Image.Image:
    """The first frame (drafted for JPEG beforehand), decoded, oriented, in sRGB RGB."""
    if getattr(image, "n_frames", 1) > 1:
        image.seek(0)
    image.load()
    ImageOps.exif_transpose(image, in_place=True)
    converted = _to_srgb(image)
    if converted is not image:
        image.close()  # the decoded pixels are not needed any more: free them now
    return converted


# JPEG is decoded in draft mode (the decoder's DCT scaling, 1/2, 1/4 or 1/8) to the smallest scale
# that still covers the large variant (and a 64 px thumbnail side), then the variants are made as a
# cascade, large -> medium -> small, each from the previous one, so the full-resolution pixels are
# dropped after the first resize. EXIF orientation is applied; an ICC profile is converted to sRGB;
# transparency is flattened on white. The first frame of an animated or multi-frame file is the
# image. Output: progressive JPEG, 4:2:0, quality 82.
def make_variants(stream: IO[bytes], limits: ImageLimits) -> ProcessedImage:
    """Screen `stream` and make the four variants, or raise ImageRejected with the reason."""
    image = open_screened(stream, limits)
    try:
        coded_size = image.size
        if image.format == "JPEG":
            image.draft("RGB", _draft_target(*image.size))
        _check_memory(image, coded_size, limits.max_decode_bytes)
        # After the check: a PNG's EXIF may follow its pixels, and reading it decodes them.
        width, height = _oriented_size(image, coded_size)
        try:
            with _pixel_limit(limits.max_pixels):
                decoded = _decode(image)
        except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError) as error:
            raise ImageRejected("The image is truncated or broken.") from error
        made = _cascade(decoded)
        del decoded
        # Encoded before the source closes: a small source may be its own large variant.
        encoded = {name: _encode(each) for name, each in made.items()}
    finally:
        image.close()
    return ProcessedImage(original_width=width, original_height=height, variants=encoded)


def _cascade(decoded: Image.Image) -> dict[str, Image.Image]:
    """Each variant from the previous one, large to small; the thumbnail from the smallest
    variant that still covers its side (the decoded image when none does)."""
    large = _fit(decoded, VARIANTS_BY_NAME["large"].size)
    medium = _fit(large, VARIANTS_BY_NAME["medium"].size)
    small = _fit(medium, VARIANTS_BY_NAME["small"].size)
    thumb_source = next(
        (each for each in (small, medium, large) if min(each.size) >= THUMBNAIL.size), decoded
    )
    thumbnail = _square(thumb_source, THUMBNAIL.size)
    return {"large": large, "medium": medium, "small": small, "thumbnail": thumbnail}
