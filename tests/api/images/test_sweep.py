"""`flask images sweep`: files without a row go (listed first with --dry-run)."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from tests.factories import make_user
from tests.uploads import upload


def _stray(root: Path, name: str, *, age_seconds: int = 7200) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xff\xd8\xff")
    old = time.time() - age_seconds
    os.utime(path, (old, old))
    return path


def test_sweep_removes_files_without_a_row_and_keeps_the_rest(app, api, image_files):
    alice = make_user()
    kept = upload(api.as_user(alice), "/api/images/profiles").get_json()["image"]
    root = Path(app.config["IMAGE_ROOT"])
    orphan = uuid.uuid4()
    stray = [
        _stray(root, f"Large/{orphan}-1024.jpg"),
        _stray(root, f"Thumbnail/{orphan}-64.jpg"),
        _stray(root, f"Medium/.tmp-abc-{orphan}-612.jpg"),
    ]
    fresh = _stray(root, f"Small/{uuid.uuid4()}-306.jpg", age_seconds=5)  # in flight
    foreign = _stray(root, "README.txt")

    dry = app.test_cli_runner().invoke(args=["images", "sweep", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would remove 3 files" in dry.output
    assert all(path.exists() for path in stray)
    assert f"Large/{orphan}-1024.jpg" in dry.output

    result = app.test_cli_runner().invoke(args=["images", "sweep"])
    assert result.exit_code == 0, result.output
    assert "removed 3 files" in result.output
    assert not any(path.exists() for path in stray)
    assert fresh.exists()
    assert foreign.exists()
    guid = kept["contentImageId"]
    assert len([name for name in image_files() if guid in name]) == 4


def test_sweep_with_no_grace_takes_fresh_strays_too(app):
    root = Path(app.config["IMAGE_ROOT"])
    fresh = _stray(root, f"Small/{uuid.uuid4()}-306.jpg", age_seconds=5)
    result = app.test_cli_runner().invoke(args=["images", "sweep", "--grace-minutes", "0"])
    assert result.exit_code == 0, result.output
    assert "removed 1 file" in result.output
    assert not fresh.exists()
