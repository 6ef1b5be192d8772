"""The OpenAPI document as TypeScript integrators' tools read it, with the npm packages
pinned in clients/typescript (CI installs them): Redocly's `recommended` and Spectral's
`spectral:oas`, no rule changed, find no error and no operationId warning;
openapi-typescript's types and clients/typescript/flow.ts (openapi-fetch) pass
`tsc --strict`, then node runs the flow against gunicorn and the worker, webhook
deliveries checked with the npm `standardwebhooks`; openapi-generator's `typescript-fetch`
package compiles whole under `tsc --strict`. Those start node (the last Java too) and are
marked `processes`; without node, its packages or Java they skip, and CI requires them
(tests.node)."""

from __future__ import annotations

import importlib.resources
import json
import re
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.generated_client.serving import served_with_worker
from tests.node import CLIENTS, MODULES, environment, packages, run_tool, unavailable
from tests.serving import free_port

METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture
def document(api) -> dict[str, Any]:
    return api.get("/api/openapi.json").get_json()


def written(document: dict[str, Any], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "openapi.json"
    path.write_text(json.dumps(document))
    return path


def test_the_lint_configurations_are_the_plain_rule_sets():
    """Redocly's `recommended` and Spectral's `spectral:oas` as their authors ship them:
    a finding is fixed in the document, never by turning a rule off or down."""
    assert (CLIENTS / "redocly.yaml").read_text().split() == ["extends:", "-", "recommended"]
    assert (CLIENTS / ".spectral.yaml").read_text().split() == ["extends:", "-", "spectral:oas"]


@pytest.mark.processes
def test_redocly_recommended_finds_no_error_and_no_operation_id_warning(document, tmp_path):
    node = packages()
    spec = written(document, tmp_path)
    run = run_tool(
        node, "redocly", "lint", "--config", "redocly.yaml", "--format", "json", str(spec)
    )
    report = json.loads(run.stdout)
    errors = [one for one in report["problems"] if one["severity"] == "error"]
    assert errors == [], run.stdout
    rules = {one["ruleId"] for one in report["problems"]}
    assert not {"operation-operationId", "operation-operationId-unique"} & rules, rules
    assert run.returncode == 0, run.stderr


@pytest.mark.processes
def test_spectral_oas_finds_no_error_and_no_operation_id_warning(document, tmp_path):
    node = packages()
    spec = written(document, tmp_path)
    run = run_tool(node, "spectral", "lint", "--ruleset", ".spectral.yaml", "-f", "json", str(spec))
    results = json.loads(run.stdout) if run.stdout.strip().startswith("[") else None
    assert results is not None, run.stdout + run.stderr
    errors = [one for one in results if one["severity"] == 0]
    assert errors == [], errors
    codes = {one["code"] for one in results}
    assert not {c for c in codes if c.startswith("operation-operationId")}, codes
    assert run.returncode == 0, run.stderr


# --- openapi-typescript and openapi-fetch ---------------------------------------------------


@pytest.fixture
def receiver_port() -> int:
    return free_port()


@pytest.fixture
def served(
    app, database_url: str, tmp_path: Path, receiver_port: int
) -> Iterator[tuple[str, Path]]:
    """gunicorn and the worker, letting webhook deliveries reach the flow's receiver on
    127.0.0.1 (tests only; a production start refuses WEBHOOKS_ALLOW_LOOPBACK)."""
    loopback = {
        "WEBHOOKS_ALLOW_LOOPBACK": "true",
        "WEBHOOK_ALLOWED_PORTS": f"80,443,{receiver_port}",
    }
    with served_with_worker(database_url, tmp_path / "service", **loopback) as found:
        yield found


@pytest.mark.processes
def test_typescript_types_and_the_integrator_flow_run_by_node(served, receiver_port, tmp_path):
    """openapi-typescript's types of the served document (defaults left optional in what a
    client sends: the server fills them in), flow.ts type-checked with them under
    `tsc --strict --noEmit`, then run by node (its types stripped) against the service."""
    node = packages()
    base_url, outbox = served
    with urllib.request.urlopen(f"{base_url}/api/openapi.json", timeout=30) as answer:  # noqa: S310 - our own server
        document = json.load(answer)
    work = tmp_path / "flow"
    written(document, work)
    for name in ("package.json", "tsconfig.json", "flow.ts"):
        shutil.copy(CLIENTS / name, work / name)
    (work / "node_modules").symlink_to(MODULES, target_is_directory=True)
    config = json.loads((work / "tsconfig.json").read_text())["compilerOptions"]
    assert (config["strict"], config["noEmit"]) == (True, True)

    types = run_tool(
        node, "openapi-typescript", "openapi.json", "-o", "openapi.ts",
        "--default-non-nullable=false", cwd=work,
    )  # fmt: skip
    assert types.returncode == 0, types.stdout + types.stderr
    checked = run_tool(node, "tsc", "-p", "tsconfig.json", cwd=work)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    flow = subprocess.run(  # noqa: S603 - node, with our own script
        [node, "--experimental-strip-types", "--disable-warning=ExperimentalWarning", "flow.ts"],
        cwd=work,
        env={
            **environment(node),
            "BASE_URL": base_url,
            "OUTBOX": str(outbox),
            "RECEIVER_PORT": str(receiver_port),
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert flow.returncode == 0, flow.stdout + flow.stderr
    assert "typescript flow: 7 steps passed" in flow.stdout


# --- openapi-generator's typescript-fetch ---------------------------------------------------

# openapi-generator (7.26) names the model imports of the `webhooks` section's file only
# when one of its operations has a JSON header parameter: otherwise that file imports
# `type ,` from '../models/' and does not compile, however the document names its bodies
# (each import's `classname` is there, its `className` is not). The generator's own
# template is used, with that import line naming the model by `classname`, which is the
# same name wherever both are set (the default file naming). Drop this once a release
# names them; the check below fails when the template no longer reads as expected.
TEMPLATE = "typescript-fetch/apis.mustache"
IMPORTS = """{{#imports}}
import {
    type {{className}},
    {{className}}FromJSON,
    {{className}}ToJSON,
} from '../models/{{classFileName}}{{importFileExtension}}';
{{/imports}}"""


def generator_templates(folder: Path) -> Path:
    jar = importlib.resources.files("openapi_generator_cli") / "openapi-generator.jar"
    with zipfile.ZipFile(str(jar)) as archive:
        template = archive.read(TEMPLATE).decode()
    assert template.count(IMPORTS) == 1, "the generator's template changed: review the fix"
    named = IMPORTS.replace("{{className}}", "{{classname}}").replace(
        "{{classFileName}}", "{{classname}}"
    )
    folder.mkdir(parents=True)
    (folder / "apis.mustache").write_text(template.replace(IMPORTS, named))
    return folder


def java() -> str:
    found = shutil.which("java")
    if found is None:
        unavailable("a Java runtime is not installed (CI installs default-jre-headless)")
    return str(found)


@pytest.mark.processes
def test_the_typescript_fetch_client_compiles_whole_under_strict(document, tmp_path):
    node = packages()
    java()
    spec = written(document, tmp_path)
    output = tmp_path / "typescript-fetch"
    generated = subprocess.run(  # noqa: S603 - the development lock's generator, fixed arguments
        [
            str(Path(sys.executable).with_name("openapi-generator-cli")), "generate",
            "-i", str(spec), "-g", "typescript-fetch", "-o", str(output),
            "-t", str(generator_templates(tmp_path / "templates")),
            "--additional-properties=npmName=location-notes-client,npmVersion=0.0.0",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )  # fmt: skip
    assert generated.returncode == 0, generated.stdout + generated.stderr
    sources = "\n".join(path.read_text() for path in (output / "src").rglob("*.ts"))
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                assert f"async {operation['operationId']}(" in sources, f"{method} {path}"
    for event_type, item in document["webhooks"].items():
        assert f"async {item['post']['operationId']}(" in sources, event_type
    # Every schema is a model, but a multipart form's, whose fields become parameters.
    forms = {
        media["schema"]["$ref"].rsplit("/", 1)[-1]
        for item in document["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict)
        for kind, media in operation.get("requestBody", {}).get("content", {}).items()
        if kind == "multipart/form-data"
    }
    models = {path.stem for path in (output / "src" / "models").glob("*.ts")}
    assert forms
    assert set(document["components"]["schemas"]) - forms <= models

    compiled = run_tool(
        node, "tsc", "-p", "tsconfig.json", "--strict", "--noEmit", cwd=output, timeout=600
    )
    errors = re.findall(r"error TS\d+", compiled.stdout)
    assert compiled.returncode == 0, f"{len(errors)} errors:\n{compiled.stdout[-5000:]}"
