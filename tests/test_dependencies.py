"""The lock files in requirements/ match pyproject.toml: every declared dependency is
pinned, with hashes, in the set that installs it, at a version its range allows, and the
runtime set carries no test tool. A dependency added without `make lock` fails here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def pins(name: str) -> dict[str, str]:
    """Package -> pinned version of one lock file; every pin must carry hashes."""
    text = (ROOT / "requirements" / f"{name}.txt").read_text()
    found = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text.strip()):
        match = re.match(r"([A-Za-z0-9._-]+)==([^ ;\\]+)", block)
        if match is None:
            continue
        assert "--hash=sha256:" in block, f"{match.group(1)} in {name}.txt has no hash"
        found[canonicalize_name(match.group(1))] = match.group(2)
    return found


def declared(*extras: str) -> list[Requirement]:
    requirements = [Requirement(line) for line in PROJECT["dependencies"]]
    for extra in extras:
        requirements += [Requirement(line) for line in PROJECT["optional-dependencies"][extra]]
    return requirements


@pytest.mark.parametrize(("lock", "extras"), [("runtime", ()), ("dev", ("test", "s3", "redis"))])
def test_every_declared_dependency_is_pinned_in_its_set(lock, extras):
    pinned = pins(lock)
    for requirement in declared(*extras):
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{name} is not in requirements/{lock}.txt: run make lock"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"{name}=={pinned[name]} in {lock}.txt is outside {requirement.specifier}"
        )


@pytest.mark.parametrize("extra", ["s3", "redis"])
def test_an_extra_lock_adds_its_packages_at_the_runtime_pins(extra):
    runtime, added = pins("runtime"), pins(extra)
    assert not set(added) & set(runtime), f"{extra}.txt repeats runtime packages"
    for line in PROJECT["optional-dependencies"][extra]:
        assert canonicalize_name(Requirement(line).name) in added


def test_the_runtime_set_carries_no_test_tool():
    runtime = pins("runtime")
    for requirement in declared("test"):
        name = canonicalize_name(requirement.name)
        if name not in {canonicalize_name(r.name) for r in declared()}:
            assert name not in runtime, f"{name} (a test tool) is in the runtime set"
