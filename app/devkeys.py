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
import json
import os
import secrets
import tempfile
from collections.abc import Iterable
from pathlib import Path

KEY_BYTES = 48  # secrets.token_urlsafe(48): 64 characters


def development_keys(path: Path, names: Iterable[str]) -> dict[str, str]:
    """The keys for `names` kept in `path`, made (and stored) the first time one is
    missing."""
    keys = _read(path)
    wanted = list(names)
    if all(name in keys for name in wanted):
        return {name: keys[name] for name in wanted}
    made = {**{name: secrets.token_urlsafe(KEY_BYTES) for name in wanted}, **keys}
    _publish(path, made)
    keys = _read(path)  # whoever published first wins; every worker uses that file
    return {name: keys[name] for name in wanted}


def _read(path: Path) -> dict[str, str]:
    try:
        keys = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {str(name): str(value) for name, value in keys.items()}


def _publish(path: Path, keys: dict[str, str]) -> None:
    """Write the file whole and private: a temporary file made 0600, then linked (a
    first start, so two workers starting together cannot both win) or, when keys were
    added to an existing file, renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".dev-keys-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(keys, file, indent=2)
        os.chmod(temporary, 0o600)
        if path.exists():
            os.replace(temporary, path)
        else:
            with contextlib.suppress(FileExistsError):
                os.link(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
