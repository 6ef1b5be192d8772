"""The deployment files of deploy/ and `.env.example` agree with the code: every setting
the app and gunicorn read is in `.env.example`, every name the compose file sets is one
they read, and the files the compose file and the Dockerfile name exist. (The image is
linted by hadolint in `make lint`; the topology run of `make topology` starts the stack.)"""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"

# Read by the app but not production settings, each with why it is not in .env.example.
NOT_FOR_PRODUCTION = {
    "DEV_KEYS_FILE": "where development keys are kept; production sets the keys themselves",
    "DEV_FALLBACK_IP": "a development stand-in for a loopback client's address",
    "MAIL_OUTBOX_DIR": "MAIL_BACKEND=file only, which production refuses",
    "WEBHOOKS_ALLOW_LOOPBACK": "test-only; production refuses it",
    "PUBLIC_BASE_URL_ALLOW_LOCAL": "the test rig's override; a public host never sets it",
}
# Read by libraries from the environment, not by config.py.
LIBRARY_SETTINGS = {
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "PROMETHEUS_MULTIPROC_DIR",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_TRACES_SAMPLER",
    "OTEL_TRACES_SAMPLER_ARG",
}


def settings_read() -> set[str]:
    """Every environment variable config.py and gunicorn.conf.py read."""
    config = (ROOT / "config.py").read_text()
    names = set(re.findall(r'env_(?:str|int|float|bool|list)\(\s*"([A-Z][A-Z0-9_]+)"', config))
    names |= set(re.findall(r'os\.environ\.get\(\s*"([A-Z][A-Z0-9_]+)"', config))
    gunicorn = (ROOT / "gunicorn.conf.py").read_text()
    names |= set(re.findall(r"""os\.environ(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]+)["']""", gunicorn))
    return names


def env_example_names() -> set[str]:
    text = (ROOT / ".env.example").read_text()
    return set(re.findall(r"^(?:# )?([A-Z][A-Z0-9_]+)=", text, re.MULTILINE))


def test_env_example_names_every_production_setting():
    missing = settings_read() - env_example_names() - set(NOT_FOR_PRODUCTION)
    assert missing == set(), f"add to .env.example: {sorted(missing)}"


def test_env_example_names_nothing_the_app_does_not_read():
    unknown = env_example_names() - settings_read() - LIBRARY_SETTINGS
    assert unknown == set()


def test_env_example_leaves_the_secrets_empty():
    text = (ROOT / ".env.example").read_text()
    for name in ("SECRET_KEY", "JWT_SECRET_KEY", "TRACKABLE_CODE_KEY", "WEBHOOK_SECRETS_KEY"):
        assert re.search(rf"^{name}=$", text, re.MULTILINE), name


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def test_the_compose_stack_has_every_part():
    services = compose()["services"]
    images = {name: str(service.get("image", "")) for name, service in services.items()}
    assert images["postgres"].startswith("postgres:")
    assert images["redis"].startswith("redis:")
    assert images["minio"].startswith("minio/")
    assert images["mail"].startswith("axllent/mailpit")
    assert images["nginx"].startswith("nginx:")
    assert services["migrate"]["build"]["dockerfile"] == "deploy/Dockerfile"
    for name in ("app1", "app2", "app-uploads", "worker"):
        assert services[name]["image"] == services["migrate"]["image"]
    assert services["worker"]["command"] == ["flask", "--app", "wsgi", "worker"]
    assert services["migrate"]["command"] == ["flask", "--app", "wsgi", "db", "upgrade"]


def test_the_compose_stack_sets_only_settings_the_app_reads():
    for name in ("app1", "app-uploads"):
        app = compose()["services"][name]
        unknown = set(app["environment"]) - settings_read() - LIBRARY_SETTINGS
        assert unknown == set()


def test_the_uploads_instance_is_the_app_with_its_own_pool_and_a_smaller_cpu_share():
    services = compose()["services"]
    uploads, app = services["app-uploads"], services["app1"]
    assert uploads["environment"] == {**app["environment"], "WEB_CONCURRENCY": "1"}
    assert uploads.get("command", app.get("command")) == app.get("command")
    assert uploads["cpu_shares"] < app.get("cpu_shares", 1024)
    assert "app-uploads" in services["nginx"]["depends_on"]


def test_the_files_the_compose_stack_mounts_exist():
    for volume in compose()["services"]["nginx"]["volumes"]:
        source = volume.split(":")[0]
        assert (DEPLOY / source).is_file(), source


def test_the_dockerfile_copies_files_that_exist_and_are_not_ignored():
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    ignore = (ROOT / ".dockerignore").read_text()
    kept = {line[1:].rstrip("/") for line in ignore.splitlines() if line.startswith("!")}
    for line in dockerfile.splitlines():
        if not line.startswith("COPY ") or "--from=" in line:
            continue
        for source in line.split()[1:-1]:
            assert (ROOT / source).exists(), source
            assert source.rstrip("/") in kept, f"{source} is left out by .dockerignore"


def test_the_systemd_units_run_the_same_commands_as_the_image():
    units = {}
    for path in (DEPLOY / "systemd").glob("*.service"):
        parser = configparser.ConfigParser(strict=False, interpolation=None)
        parser.read_string(path.read_text())
        units[path.stem] = parser
    assert set(units) == {
        "location-notes-web@",
        "location-notes-uploads",
        "location-notes-worker",
        "location-notes-migrate",
    }
    for web in ("location-notes-web@", "location-notes-uploads"):
        assert units[web]["Service"]["ExecStart"].endswith("gunicorn -c gunicorn.conf.py wsgi:app")
    assert units["location-notes-worker"]["Service"]["ExecStart"].endswith(
        "flask --app wsgi worker"
    )
    assert units["location-notes-migrate"]["Service"]["ExecStart"].endswith(
        "flask --app wsgi db upgrade"
    )
    for unit in units.values():
        assert unit["Service"]["User"] == "location-notes"


def environment_files(unit: str) -> list[str]:
    text = (DEPLOY / "systemd" / f"{unit}.service").read_text()
    return re.findall(r"^EnvironmentFile=(.+)$", text, re.MULTILINE)


def test_every_unit_reads_the_shared_settings_and_the_uploads_unit_its_own_after():
    for path in (DEPLOY / "systemd").glob("*.service"):
        assert environment_files(path.stem)[0] == "/etc/location-notes/env", path.name
    # A later file overrides an earlier one (Environment= would not: files win over it).
    assert environment_files("location-notes-uploads") == [
        "/etc/location-notes/env",
        "/etc/location-notes/uploads.env",
    ]


def test_the_uploads_unit_yields_the_cpu_to_the_web_unit():
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.read_string((DEPLOY / "systemd" / "location-notes-uploads.service").read_text())
    assert int(parser["Service"]["Nice"]) > 0
    assert int(parser["Service"]["CPUWeight"]) < 100  # systemd's default


def test_no_unit_requires_the_migrations_so_running_them_restarts_nothing():
    """Requires=, BindsTo=, PartOf= or Requisite= on the migration unit would stop or
    restart the web with it; After= only orders a boot."""
    for path in (DEPLOY / "systemd").glob("*.service"):
        for line in path.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() in {"Requires", "BindsTo", "PartOf", "Requisite", "Upholds"}:
                assert "location-notes-migrate" not in value, f"{path.name}: {line}"


def test_each_web_instance_is_named_by_its_port():
    text = (DEPLOY / "systemd" / "location-notes-web@.service").read_text()
    assert "ExecStart=/usr/bin/env PORT=%i " in text
    assert "EnvironmentFile=-/etc/location-notes/web-%i.env" in text


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_every_unit_is_hardened_below_an_exposure_of_five():
    """`systemd-analyze security` (offline: no systemd needed) rates each unit; 10 is a
    unit with no hardening at all, the units were 8.5 before."""
    for path in (DEPLOY / "systemd").glob("*.service"):
        name = path.name.replace("@.", "@8000.")
        with tempfile.TemporaryDirectory() as directory:
            unit = Path(directory) / name
            unit.write_text(path.read_text())
            result = subprocess.run(  # noqa: S603 - our own unit
                [
                    str(shutil.which("systemd-analyze")),
                    "security",
                    "--offline=true",
                    "--no-pager",
                    str(unit),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
        score = re.search(r"Overall exposure level for \S+: ([0-9.]+)", result.stdout)
        assert score is not None, result.stdout + result.stderr
        assert float(score.group(1)) < 5, f"{path.name}: {score.group(0)}"
