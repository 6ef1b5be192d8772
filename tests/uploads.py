"""Uploading an image through the API, as the image, privacy, page and metrics tests do."""

from __future__ import annotations

import functools
import io

from tests.api.images.samples import sample


@functools.cache
def default_photo() -> bytes:
    """A JPEG a little larger than the small variant: its upload makes one real resize, at a
    fifth of the cost of an 800 x 600 one (each size is tested in api/images/test_uploads)."""
    return sample("JPEG", 400, 300)


def upload(client, url: str, data: bytes | None = None, *, field: str = "file", name="x.jpg"):
    data = default_photo() if data is None else data
    return client.post(
        url, data={field: (io.BytesIO(data), name)}, content_type="multipart/form-data"
    )
