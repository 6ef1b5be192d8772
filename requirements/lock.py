"""Writes the lock files of requirements/ from pyproject.toml with uv (`make lock`).

runtime.txt is what `make run` installs; dev.txt what `make test` installs (runtime, the
optional stores and the test tools); s3.txt and redis.txt hold only what their extra adds
to runtime.txt, to be installed beside it; uv.txt is dev.txt's uv line alone, which pip
installs first so that uv installs the rest (the Makefile). Every line is pinned and hashed
for every platform and Python from 3.11 (`--universal`). Pins already in a file are kept
unless `--upgrade` is given (uv reads the existing file as its preference).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SETS = {
    "runtime": [],
    "dev": ["--extra", "test"],
    "s3": ["--extra", "s3"],
    "redis": ["--extra", "redis"],
    "sentry": ["--extra", "sentry"],
    "otel": ["--extra", "otel"],
}
EXTRAS = ("s3", "redis", "sentry", "otel")


def compile_set(extra: list[str], output: Path, upgrade: bool) -> None:
    command = [
        sys.executable, "-m", "uv", "pip", "compile", "pyproject.toml", *extra,
        "--universal", "--python-version", "3.11", "--generate-hashes", "--no-header",
        "--quiet", "-o", str(output),
    ]  # fmt: skip
    if upgrade:
        command.append("--upgrade")
    subprocess.run(command, cwd=HERE.parent, check=True)  # noqa: S603 - our own command


def blocks(text: str) -> dict[str, str]:
    """Package name -> its block (pin, hashes, `# via` lines)."""
    found = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text.strip()):
        found[re.match(r"[A-Za-z0-9._-]+", block).group(0).lower()] = block
    return found


def main() -> None:
    upgrade = "--upgrade" in sys.argv[1:]
    for name in ("runtime", "dev"):
        compile_set(SETS[name], HERE / f"{name}.txt", upgrade)
    uv = blocks((HERE / "dev.txt").read_text())["uv"]
    header = "# uv alone, as pinned in dev.txt: pip installs it, then uv the sets (the Makefile).\n"
    (HERE / "uv.txt").write_text(header + uv + "\n")
    runtime = blocks((HERE / "runtime.txt").read_text())
    with tempfile.TemporaryDirectory() as temp:
        for extra in EXTRAS:
            full = Path(temp) / f"{extra}.txt"
            # Keep runtime's pins and, unless upgrading, the extra's own.
            kept = "" if upgrade else (HERE / f"{extra}.txt").read_text()
            full.write_text((HERE / "runtime.txt").read_text() + kept)
            compile_set(SETS[extra], full, upgrade=False)
            added = {k: v for k, v in blocks(full.read_text()).items() if k not in runtime}
            header = f"# The `{extra}` extra: what it adds to runtime.txt (install both).\n"
            (HERE / f"{extra}.txt").write_text(header + "\n".join(added.values()) + "\n")


if __name__ == "__main__":
    main()
