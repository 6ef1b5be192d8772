"""Generate a Python client from the served OpenAPI document with openapi-python-client,
as a third-party integrator would, and import it.

The generator runs with `--fail-on-warning`: a schema it cannot read, a response it has to
drop or an operation it skips fails the test with the generator's own words. Its one
configured exception is binary downloads: it reads only JSON, text and
`application/octet-stream` responses, so the GPX exports (`application/gpx+xml`), the
journey's GeoJSON (`application/geo+json`), the image variants (`image/jpeg`), the label
sheets (`application/pdf`) and the data export (`application/zip`) are read as octet
streams (its documented `content_type_overrides`); the document keeps their real types.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

PACKAGE = "location_notes_client"
OPERATION_METHODS = {"get", "post", "put", "patch", "delete"}
CONFIG = {
    # No formatting hook: the code is imported, not read, and ruff would only add time.
    "post_hooks": [],
    "content_type_overrides": {
        "application/gpx+xml": "application/octet-stream",
        "image/jpeg": "application/octet-stream",
        "application/pdf": "application/octet-stream",
        "application/zip": "application/octet-stream",
        "application/geo+json": "application/octet-stream",
    },
}
# `"method": "post",` then `"url": "/api/notes/mine/{note_id}/move"` in each operation.
OPERATION_IN_MODULE = re.compile(r'"method": "(\w+)",\s*"url": "([^"]+)"')


def generate_client(document: dict[str, Any], folder: Path) -> ModuleType:
    """Write `document`, generate its client under `folder` and import it as PACKAGE."""
    folder.mkdir(parents=True, exist_ok=True)
    spec, config = folder / "openapi.json", folder / "generator.json"
    spec.write_text(json.dumps(document))
    config.write_text(json.dumps(CONFIG))
    output = folder / PACKAGE
    run = subprocess.run(  # noqa: S603 - our own interpreter and fixed arguments
        [
            sys.executable,
            "-m",
            "openapi_python_client",
            "generate",
            "--path",
            str(spec),
            "--output-path",
            str(output),
            "--meta",
            "none",
            "--config",
            str(config),
            "--fail-on-warning",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = run.stdout + run.stderr
    assert run.returncode == 0, f"openapi-python-client failed:\n{report}"
    assert "warning" not in report.lower(), f"openapi-python-client warned:\n{report}"
    missing = documented_operations(document) - generated_operations(output)
    assert not missing, f"operations left out of the generated client: {sorted(missing)}"
    for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
        del sys.modules[name]  # a client generated earlier in this process
    sys.path.insert(0, str(folder))
    try:
        importlib.invalidate_caches()
        return importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))


def _shape(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


def documented_operations(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (method, _shape(path))
        for path, item in document["paths"].items()
        for method in item
        if method in OPERATION_METHODS
    }


def generated_operations(package: Path) -> set[tuple[str, str]]:
    found = set()
    for module in (package / "api").glob("*/*.py"):
        for method, path in OPERATION_IN_MODULE.findall(module.read_text()):
            found.add((method, _shape(path)))
    return found
