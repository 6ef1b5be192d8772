"""Fetch the country borders the built-in base map draws (app/storage/basemap.py).

Downloads the npm package `world-atlas` 2.0.2 (ISC licence; its data is Natural Earth's
1:50m admin-0 countries, public domain) from the npm registry, checks the archive against
the sha512 integrity the registry published for that release, and writes
`package/countries-50m.json` (TopoJSON) gzipped to app/data/countries-50m.json.gz, and
the package's licence (ISC: its notice goes with every copy) beside it.

The result is committed, so installing the service needs neither this script nor npm;
run it only to check or renew the file:

    .venv/bin/python tools/fetch_world_atlas.py           # write the file
    .venv/bin/python tools/fetch_world_atlas.py --check   # compare with the committed one
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import io
import sys
import tarfile
import urllib.request
from pathlib import Path

PACKAGE = "world-atlas"
VERSION = "2.0.2"
TARBALL = f"https://registry.npmjs.org/{PACKAGE}/-/{PACKAGE}-{VERSION}.tgz"
# `npm view world-atlas@2.0.2 dist.integrity`: the archive's hash as the registry publishes it.
INTEGRITY = (
    "sha512-IXfV0qwlKXpckz1FhwXVwKRjiIhOnWttOskm5CtxMsjgE/"
    "MXAYRHWJqgXOpM8IkcPBoXnyTU5lFHcYa5ChG0LQ=="
)
MEMBER = "package/countries-50m.json"
LICENSE = "package/LICENSE"
DATA = Path(__file__).resolve().parents[1] / "app" / "data"
TARGET = DATA / "countries-50m.json.gz"
LICENSE_TARGET = DATA / "countries-50m.LICENSE.txt"


def check_integrity(data: bytes, integrity: str = INTEGRITY) -> None:
    """Raise ValueError unless `data` has the Subresource-Integrity style sha512 hash."""
    algorithm, _, expected = integrity.partition("-")
    if algorithm != "sha512":
        raise ValueError(f"unsupported integrity algorithm {algorithm!r}")
    actual = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if actual != expected:
        raise ValueError(f"{PACKAGE}-{VERSION}.tgz does not match its published sha512")


def extract(archive: bytes, name: str = MEMBER) -> bytes:
    """One file (by default the TopoJSON) from the package archive."""
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        member = tar.extractfile(name)
        if member is None:
            raise ValueError(f"{name} is not a file in the archive")
        return member.read()


def compressed(topojson: bytes) -> bytes:
    """Gzip with a fixed time stamp and no name, so the same input gives the same bytes."""
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as file:
        file.write(topojson)
    return out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    arguments = parser.parse_args()
    with urllib.request.urlopen(TARBALL, timeout=60) as response:
        archive = response.read()
    check_integrity(archive)
    files = {TARGET: compressed(extract(archive)), LICENSE_TARGET: extract(archive, LICENSE)}
    if arguments.check:
        same = all(path.is_file() and path.read_bytes() == data for path, data in files.items())
        print(f"{TARGET.name}: {'matches' if same else 'differs from'} {PACKAGE} {VERSION}")
        return 0 if same else 1
    for path, data in files.items():
        path.write_bytes(data)
        print(f"wrote {path} ({len(data)} bytes) from {PACKAGE} {VERSION}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
