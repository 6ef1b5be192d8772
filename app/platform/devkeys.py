"""Signing keys for a development instance, made on its first start.

A development app that was given no keys would otherwise sign tokens with the well-known
`config.DEV_SECRET`, and anyone who has read the repository could mint tokens for an
instance reachable on a network. Instead, the first start writes random keys to
DEV_KEYS_FILE (`instance/dev-keys.json`, mode 0600) and every later start, and every other worker,
reads the same file. Production never gets here: it refuses to start without explicit
keys (app.check_production_secrets); tests keep the fixed marker.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import tempfile
from collections.abc import Iterable
from pathlib import Path

KEY_BYTES = 48  # secrets.token_urlsafe(48): 64 characters


def development_keys(path: Path, names: Iterable[str]) -> dict[str, str]:
    """The keys for `names` kept in `path`, made (and stored) the first time one is
    missing. Workers starting together take turns on a lock file beside it, so they all
    end up with the keys the first one stored."""
    wanted = list(names)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        keys = _read(path)
        missing = [name for name in wanted if name not in keys]
        if missing:
            keys |= {name: secrets.token_urlsafe(KEY_BYTES) for name in missing}
            _write(path, keys)
    return {name: keys[name] for name in wanted}


def _read(path: Path) -> dict[str, str]:
    try:
        keys = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {str(name): str(value) for name, value in keys.items()}


def _write(path: Path, keys: dict[str, str]) -> None:
    """Whole and private: a temporary file made 0600, then renamed over the old one."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".dev-keys-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(keys, file, indent=2)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
