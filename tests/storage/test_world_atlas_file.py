"""The shipped country borders (app/data/countries-50m.json.gz) and the script that
fetches them (tools/fetch_world_atlas.py): the archive is refused unless it matches the
integrity the npm registry published, and the file is the package's TopoJSON, gzipped
the same way every time."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import tarfile
from importlib import resources

import pytest

from tools import fetch_world_atlas


def archive_with(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def integrity_of(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def test_an_archive_matching_its_integrity_is_accepted_and_its_file_extracted():
    archive = archive_with({fetch_world_atlas.MEMBER: b'{"type":"Topology"}'})
    fetch_world_atlas.check_integrity(archive, integrity_of(archive))
    assert fetch_world_atlas.extract(archive) == b'{"type":"Topology"}'


def test_an_archive_that_differs_from_the_published_hash_is_refused():
    archive = archive_with({fetch_world_atlas.MEMBER: b"{}"})
    with pytest.raises(ValueError, match="does not match"):
        fetch_world_atlas.check_integrity(archive + b"x", integrity_of(archive))
    with pytest.raises(ValueError, match="does not match"):
        fetch_world_atlas.check_integrity(archive)  # the pinned release's hash
    with pytest.raises(ValueError, match="unsupported"):
        fetch_world_atlas.check_integrity(archive, "sha1-abc")


def test_the_gzip_is_the_same_bytes_every_time():
    assert fetch_world_atlas.compressed(b"abc") == fetch_world_atlas.compressed(b"abc")
    assert gzip.decompress(fetch_world_atlas.compressed(b"abc")) == b"abc"


def test_the_shipped_file_is_natural_earths_countries_as_topojson():
    data = resources.files("app.data").joinpath("countries-50m.json.gz").read_bytes()
    topology = json.loads(gzip.decompress(data))
    assert topology["type"] == "Topology"
    names = {
        geometry["properties"]["name"]
        for geometry in topology["objects"]["countries"]["geometries"]
    }
    assert {"France", "Germany", "Switzerland", "Japan", "Brazil"} <= names
    assert len(names) > 200
