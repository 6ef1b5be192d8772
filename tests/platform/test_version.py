"""The service's version (app.platform.version): pyproject.toml's, a semantic version;
`unknown` only when the file is absent, and a broken file raises."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from app.platform.version import UNKNOWN, read_version, service_version

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?")


def test_the_version_is_pyprojects_and_semantic():
    release = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    assert service_version() == release
    assert SEMVER.fullmatch(release), release


def test_an_absent_file_is_unknown(tmp_path, caplog):
    assert read_version(tmp_path / "pyproject.toml") == UNKNOWN
    assert "unknown" in caplog.text


def test_a_file_that_is_not_toml_raises(tmp_path):
    broken = tmp_path / "pyproject.toml"
    broken.write_text('[project\nversion = "0.2.0"\n')
    with pytest.raises(tomllib.TOMLDecodeError):
        read_version(broken)


@pytest.mark.parametrize(
    "text",
    ["", "[tool.ruff]\nline-length = 100\n", '[project]\nname = "x"\n', "[project]\nversion = 2\n"],
)
def test_a_file_without_a_version_raises(tmp_path, text):
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match="names no \\[project\\] version"):
        read_version(path)


def test_a_file_that_cannot_be_read_raises(tmp_path):
    with pytest.raises(IsADirectoryError):
        read_version(tmp_path)
