"""The service's version: `[project] version` of pyproject.toml at the repository root, read
once, for the status answer and the build-info metric.

The install puts the requirements into .venv without installing the project itself, so
importlib.metadata knows no version; the file is read instead. A tree without the file (an
image that does not copy it) reports `unknown` and logs why. A file that is there but cannot
be read or names no version is a broken release: that raises, so the tests and the first
request that asks say so instead of a quiet `unknown`.
"""

from __future__ import annotations

import functools
import logging
import tomllib
from pathlib import Path

log = logging.getLogger(__name__)

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
UNKNOWN = "unknown"


@functools.cache
def service_version() -> str:
    """The running release (`0.2.0`), read once; `unknown` when pyproject.toml is absent."""
    return read_version(PYPROJECT)


def read_version(path: Path) -> str:
    """`[project] version` of the pyproject.toml at `path`, `unknown` when there is no such
    file; an unreadable file, bad TOML or no version raises."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        log.warning("No %s: the service's version is reported as %r.", path, UNKNOWN)
        return UNKNOWN
    project = tomllib.loads(text).get("project")
    version = project.get("version") if isinstance(project, dict) else None
    if not isinstance(version, str) or not version.strip():
        raise ValueError(f"{path} names no [project] version")
    return version
