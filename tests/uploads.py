"""Uploading an image through the API, as the image, privacy, page and metrics tests do."""

from __future__ import annotations

import io

from tests.api.images.samples import sample


def upload(client, url: str, data: bytes | None = None, *, field: str = "file", name="x.jpg"):
    data = sample("JPEG") if data is None else data
    return client.post(
        url, data={field: (io.BytesIO(data), name)}, content_type="multipart/form-data"
    )
