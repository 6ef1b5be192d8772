"""The early refusal of an upload whose coded data is too short for the size its header
claims (app.storage.image_headers.data_shortfall), on JPEG and PNG streams built byte by
byte: each marker the walk meets, each coding, and what it leaves to the decoder."""

from __future__ import annotations

import struct
import zlib

import pytest

from app.storage.image_headers import data_shortfall

SOI, EOI = b"\xff\xd8", b"\xff\xd9"


def segment(marker: int, body: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(body) + 2) + body


def frame(marker: int, width: int, height: int, components: int = 3) -> bytes:
    """A SOF segment: 8-bit samples, every component sampled 1x1."""
    body = struct.pack(">BHHB", 8, height, width, components)
    body += b"".join(bytes([index + 1, 0x11, 0]) for index in range(components))
    return segment(marker, body)


def scan(data_bytes: int) -> bytes:
    return segment(0xDA, b"\x01\x01\x00\x00\x3f\x00") + b"\x55" * data_bytes


@pytest.mark.parametrize("marker", [0xC0, 0xC1, 0xC2])
def test_a_huffman_jpeg_needs_a_bit_for_each_block(marker):
    # 64 x 64 pixels, three components: 3 x 64 blocks of 8 x 8, so at least 24 bytes.
    assert data_shortfall("JPEG", SOI + frame(marker, 64, 64) + scan(23) + EOI, 64, 64)
    assert not data_shortfall("JPEG", SOI + frame(marker, 64, 64) + scan(24) + EOI, 64, 64)


def test_a_lossless_jpeg_needs_a_bit_for_each_sample():
    # 16 x 16 pixels, one component, one sample a block: 256 bits.
    short = SOI + frame(0xC3, 16, 16, components=1) + scan(31) + EOI
    enough = SOI + frame(0xC3, 16, 16, components=1) + scan(32) + EOI
    assert data_shortfall("JPEG", short, 16, 16)
    assert not data_shortfall("JPEG", enough, 16, 16)


def test_an_arithmetic_jpeg_is_left_to_its_decoder():
    assert not data_shortfall("JPEG", SOI + frame(0xC9, 4096, 4096) + scan(1) + EOI, 4096, 4096)


def test_fill_bytes_and_standalone_markers_are_walked_over():
    stream = SOI + b"\xff\xff" + b"\xff\xd0" + frame(0xC0, 64, 64) + scan(1) + EOI
    assert data_shortfall("JPEG", stream, 64, 64)


def test_what_follows_the_end_of_image_is_not_read():
    stream = SOI + EOI + frame(0xC0, 64, 64) + scan(1)
    assert not data_shortfall("JPEG", stream, 64, 64)  # no frame before the end


def test_a_stream_that_breaks_off_the_marker_walk_is_left_to_its_decoder():
    assert not data_shortfall("JPEG", SOI + b"\x00\x00\x00\x00" + scan(1), 64, 64)
    assert not data_shortfall("JPEG", SOI + scan(1) + EOI, 64, 64)  # no frame at all


def test_a_frame_with_fewer_components_than_it_names_counts_those_it_has():
    body = struct.pack(">BHHB", 8, 64, 64, 3) + bytes([1, 0x11, 0])  # one of three
    stream = SOI + segment(0xC0, body) + scan(7) + EOI
    assert data_shortfall("JPEG", stream, 64, 64)  # 64 blocks of the one: 8 bytes


def png(width: int, height: int, colour_type: int, pixel_data: bytes) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixel_data)


def test_a_png_with_unknown_colour_type_or_a_cut_header_is_left_to_its_decoder():
    assert not data_shortfall("PNG", png(4000, 4000, 5, b"x"), 4000, 4000)
    assert not data_shortfall("PNG", b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, 4000, 4000)


def test_other_formats_are_left_to_their_decoder():
    assert not data_shortfall("WEBP", b"RIFF", 10_000, 10_000)
