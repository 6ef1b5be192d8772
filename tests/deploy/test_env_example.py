"""`.env.example` shows the code's own defaults, and deploy/compose.yaml pulls only pinned
images and builds the app's image once.

An uncommented `NAME=value` is the operator's to set and is not checked. A commented
`# NAME=value` claims NAME's default: config.py and gunicorn.conf.py are loaded (runpy) with
none of their settings and with only NAME=value, and every setting must come out the same
(an empty value means unset). EXAMPLES and `# default under instance/` lines are the named
exceptions; TRACKABLE_ACCESS_COOKIE_SECURE is judged as the app decides it in production.
Each load runs inside `monkeypatch.context()`, so the environment is put back.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import runpy
import tempfile
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config.py"
GUNICORN = ROOT / "gunicorn.conf.py"
ENV_EXAMPLE = ROOT / ".env.example"
COMPOSE = ROOT / "deploy" / "compose.yaml"

# A commented setting: `# NAME=value`, with an optional note after whitespace and `#`.
SETTING_LINE = re.compile(r"^# (?P<name>[A-Z][A-Z0-9_]*)=(?P<value>.*?)(?:\s+#\s*(?P<note>.*))?$")

# Commented lines that show an example value, not a default, with why.
EXAMPLES = {
    "IMAGE_ACCEL_REDIRECT_PREFIX": "off unless set; the prefix deploy/nginx/app.conf serves",
    "METRICS_BIND": "a second listener for /metrics; none unless set",
    "OTEL_EXPORTER_OTLP_ENDPOINT": "a collector's address; tracing is off unless set",
    "OTEL_EXPORTER_OTLP_HEADERS": "read by the OpenTelemetry SDK; none unless set",
    "OTEL_TRACES_SAMPLER": "read by the OpenTelemetry SDK, whose default is parentbased_always_on",
    "OTEL_TRACES_SAMPLER_ARG": "read by the OpenTelemetry SDK, with the sampler above",
}
UNDER_INSTANCE = "default under instance/"
SECURE_COOKIE = "TRACKABLE_ACCESS_COOKIE_SECURE"


@functools.cache
def names_in(path: Path) -> frozenset[str]:
    """Every string constant of `path` that looks like an environment variable's name."""
    tree = ast.parse(path.read_text())
    return frozenset(
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"[A-Z][A-Z0-9_]+", node.value)
    )


def commented_settings() -> list[tuple[int, str, str, str | None]]:
    """(line number, name, value, note) of every commented `# NAME=value` line."""
    found = []
    for number, line in enumerate(ENV_EXAMPLE.read_text().splitlines(), start=1):
        match = SETTING_LINE.match(line)
        if match:
            found.append((number, match["name"], match["value"], match["note"]))
    return found


def load(path: Path, environment: dict[str, str]) -> dict[str, Any]:
    """The settings `path` makes with only `environment` set of the names it could read."""
    cleared = (
        names_in(CONFIG) | names_in(GUNICORN) | {name for _, name, _, _ in commented_settings()}
    )
    with pytest.MonkeyPatch.context() as patch:
        for name in cleared:
            patch.setenv(name, "")  # remembers the value to put back, then
            patch.delenv(name)  # leaves the name unset while the file loads
        for name, value in environment.items():
            patch.setenv(name, value)
        # gunicorn.conf.py makes a metrics directory when none is set: not here.
        patch.setattr(tempfile, "mkdtemp", lambda **_: "/nonexistent/location-notes-metrics")
        namespace = runpy.run_path(str(path))
    if path == CONFIG:
        return {key: value for key, value in vars(namespace["Config"]).items() if key.isupper()}
    return {
        key: value
        for key, value in namespace.items()
        if not key.startswith("_") and not isinstance(value, (FunctionType, ModuleType, type))
    }


def differences(before: dict[str, Any], after: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {
        key: (before.get(key), after.get(key))
        for key in before.keys() | after.keys()
        if before.get(key) != after.get(key)
    }


def said_to_be_an_example(number: int) -> bool:
    """Whether the comment just above line `number` (the prose above its run of settings)
    calls the value an example."""
    prose = []
    for line in reversed(ENV_EXAMPLE.read_text().splitlines()[: number - 1]):
        if not line.startswith("#"):
            break
        if SETTING_LINE.match(line):
            if prose:
                break
            continue
        prose.append(line)
    return "example" in " ".join(prose).lower()


def test_every_commented_setting_shows_the_code_default():
    readers = {CONFIG: names_in(CONFIG), GUNICORN: names_in(GUNICORN)}
    defaults = {path: load(path, {}) for path in readers}
    lines = commented_settings()
    # One load with every plain default line set: when nothing differs, each line is right
    # (a wrong one would show); otherwise each line is loaded alone to name the wrong ones.
    plain = {
        name: value
        for _, name, value, note in lines
        if name not in EXAMPLES and note != UNDER_INSTANCE and name != SECURE_COOKIE
    }
    all_right = {
        path: not differences(
            defaults[path], load(path, {k: v for k, v in plain.items() if k in names})
        )
        for path, names in readers.items()
    }
    wrong = []
    for number, name, value, note in lines:
        read_by = [path for path, names in readers.items() if name in names]
        if name in plain and read_by and all(all_right[path] for path in read_by):
            continue  # shown right by the load of every plain line at once
        for problem in problems(name, value, note, number, read_by, defaults):
            wrong.append(f".env.example:{number} {name}={value}: {problem}")
    assert wrong == [], "\n".join(wrong)


def problems(
    name: str,
    value: str,
    note: str | None,
    number: int,
    read_by: list[Path],
    defaults: dict[Path, dict[str, Any]],
) -> list[str]:
    """What is wrong with the line `# name=value  # note` (line `number`)."""
    if name in EXAMPLES:
        found = [] if said_to_be_an_example(number) else ["say in the comment it is an example"]
        for path in read_by:
            if differences(defaults[path], load(path, {name: ""})):
                found.append(f"an example, but {path.name} does not leave it off when empty")
        return found
    if not read_by:
        # A library's setting (AWS_*): only "unset" can be said of it here.
        return [] if value == "" else ["read by no code of ours: an example belongs in EXAMPLES"]
    if value == "" and note == UNDER_INSTANCE:
        default = defaults[CONFIG][name]
        return [] if Path(default).is_relative_to(ROOT / "instance") else [f"is {default}"]
    if name == SECURE_COOKIE:
        # Unset in config.py (None): the app decides from APP_ENV, on in production.
        from app.services.trackables.codes.sessions import AccessCookie

        production = {"APP_ENV": "production"}
        unset = AccessCookie.from_config(load(CONFIG, production)).secure
        shown = AccessCookie.from_config(load(CONFIG, {**production, name: value})).secure
        return [] if shown == unset else [f"production's default is {unset}"]
    found = []
    for path in read_by:
        for key, (code, shown) in differences(defaults[path], load(path, {name: value})).items():
            found.append(f"{path.name} makes {key} {shown!r}, its default is {code!r}")
    return found


def test_examples_are_lines_of_the_file():
    named = {name for _, name, _, _ in commented_settings()}
    assert set(EXAMPLES) <= named


def test_each_setting_has_one_line():
    # Prose must not start a line with `# NAME=`: it would read as a second (default) line.
    text = ENV_EXAMPLE.read_text()
    names = re.findall(r"^(?:# )?([A-Z][A-Z0-9_]+)=", text, re.MULTILINE)
    assert sorted({name for name in names if names.count(name) > 1}) == []


def test_loading_leaves_the_environment_as_it_was():
    before = dict(os.environ)
    load(GUNICORN, {})
    load(CONFIG, {"APP_ENV": "production"})
    assert dict(os.environ) == before


def compose_services() -> dict[str, dict[str, Any]]:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def test_one_compose_service_builds_the_app_image_and_the_others_run_it():
    services = compose_services()
    builders = [name for name, service in services.items() if "build" in service]
    assert len(builders) == 1, f"services with build: {builders}"
    builder = builders[0]
    image = services[builder]["image"]
    assert services[builder]["build"]["dockerfile"] == "deploy/Dockerfile"
    users = [name for name, service in services.items() if service.get("image") == image]
    assert {"app1", "app2", "app-uploads", "worker"} <= set(users)
    for name in users:
        # Never pulled (the image is in no registry), and started after the build.
        assert services[name].get("pull_policy") == "never", name
        if name != builder:
            assert builder in services[name]["depends_on"], name


def test_every_image_the_compose_stack_pulls_is_pinned():
    services = compose_services()
    built = {service["image"] for service in services.values() if "build" in service}
    unpinned = []
    for name, service in services.items():
        image = service["image"]
        tag = image.rpartition("/")[2].partition(":")[2]
        if image not in built and "@sha256:" not in image and tag in ("", "latest"):
            unpinned.append(f"{name}: {image}")
    assert unpinned == [], "pin each to a released version"
