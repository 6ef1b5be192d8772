"""Settings: development defaults, refused in production."""

from __future__ import annotations

import json
import stat
import threading

import jwt
import pytest
from flask_jwt_extended import create_access_token

from app import InsecureConfiguration, create_app
from app.platform.devkeys import development_keys
from app.platform.startup_checks import production_problems
from config import DEV_SECRET, SECRET_SETTINGS, normalize_database_url

STRONG = "x" * 40


def test_production_refuses_default_secrets_and_names_them():
    with pytest.raises(InsecureConfiguration) as error:
        create_app({"ENV_NAME": "production", "SQLALCHEMY_DATABASE_URI": "sqlite://"})
    message = str(error.value)
    for name in ("SECRET_KEY", "JWT_SECRET_KEY", "TRACKABLE_CODE_KEY"):
        assert name in message


def test_production_refuses_short_secrets():
    with pytest.raises(InsecureConfiguration, match="at least 32"):
        create_app(PRODUCTION | {"SECRET_KEY": "short"})


PRODUCTION = {
    "ENV_NAME": "production",
    "SQLALCHEMY_DATABASE_URI": "sqlite://",
    "DATABASE_ALLOW_SQLITE": True,  # the test rig's override: no PostgreSQL server needed
    "SECRET_KEY": STRONG,
    "JWT_SECRET_KEY": STRONG + "j",
    "TRACKABLE_CODE_KEY": STRONG + "t",
    "WEBHOOK_SECRETS_KEY": STRONG + "w",
    "PUBLIC_BASE_URL": "https://notes.example.org",
    "MAIL_BACKEND": "smtp",
}


def test_production_refuses_sqlite_unless_a_test_rig_says_so():
    with pytest.raises(InsecureConfiguration) as error:
        create_app(PRODUCTION | {"DATABASE_ALLOW_SQLITE": False})
    assert "DATABASE_URL names SQLite" in str(error.value)
    assert str(error.value).count("\n- ") == 1  # that line alone
    postgres = "postgresql://app@db.internal:5432/notes"
    assert "SQLite" not in "\n".join(
        production_problems(
            PRODUCTION | {"DATABASE_ALLOW_SQLITE": False, "SQLALCHEMY_DATABASE_URI": postgres}
        )
    )


def test_production_starts_with_safe_settings():
    app = create_app(PRODUCTION)
    assert app.config["SECRET_KEY"] != DEV_SECRET
    assert app.config["PUBLIC_BASE_URL"] == "https://notes.example.org"
    assert app.config["RATELIMIT_STORAGE_URI"] == "database://"  # shared, with no Redis


def test_production_may_keep_rate_limits_in_redis():
    app = create_app(PRODUCTION | {"RATELIMIT_STORAGE_URI": "redis://127.0.0.1:6379/0"})
    assert app.config["RATELIMIT_STORAGE_URI"].startswith("redis://")


@pytest.mark.parametrize(
    ("setting", "value", "named"),
    [
        ("PUBLIC_BASE_URL", "", "set PUBLIC_BASE_URL"),
        ("PUBLIC_BASE_URL", "http://notes.example.org", "must be https"),
        ("PUBLIC_BASE_URL", "https://127.0.0.1:8000", "local or private host"),
        ("PUBLIC_BASE_URL", "https://localhost", "local or private host"),
        ("PUBLIC_BASE_URL", "https://10.1.2.3", "local or private host"),
        ("PUBLIC_BASE_URL", "https://[::1]:8443", "local or private host"),
        ("PUBLIC_BASE_URL", "https://192.168.0.10/notes", "local or private host"),
        ("MAIL_BACKEND", "console", "MAIL_BACKEND=console"),
        ("MAIL_BACKEND", "file", "MAIL_BACKEND=file"),
        ("RATELIMIT_STORAGE_URI", "memory://", "RATELIMIT_STORAGE_URI=memory://"),
        ("JWT_SECRET_KEY", STRONG, "SECRET_KEY and JWT_SECRET_KEY have the same value"),
        ("TRUSTED_PROXIES", ["10.0.0.0/8", "proxy.local"], "'proxy.local' is not an address"),
    ],
)
def test_production_refuses_an_unsafe_setting_and_names_it(setting, value, named):
    with pytest.raises(InsecureConfiguration) as error:
        create_app(PRODUCTION | {setting: value})
    assert named in str(error.value)


def test_production_names_every_unsafe_setting_at_once():
    with pytest.raises(InsecureConfiguration) as error:
        create_app(
            {
                "ENV_NAME": "production",
                "SQLALCHEMY_DATABASE_URI": "sqlite://",
                "RATELIMIT_STORAGE_URI": "memory://",
            }
        )
    message = str(error.value)
    for named in ("TRACKABLE_CODE_KEY", "PUBLIC_BASE_URL", "MAIL_BACKEND", "RATELIMIT_STORAGE"):
        assert named in message


def test_a_test_rig_may_serve_production_on_a_local_http_address():
    local = {"PUBLIC_BASE_URL": "http://127.0.0.1:8000", "PUBLIC_BASE_URL_ALLOW_LOCAL": True}
    app = create_app(PRODUCTION | local)
    assert app.config["PUBLIC_BASE_URL"] == "http://127.0.0.1:8000"


@pytest.mark.parametrize(
    ("host", "port", "expected"),
    [
        (None, None, "http://127.0.0.1:8000"),
        (None, "9000", "http://127.0.0.1:9000"),
        ("0.0.0.0", "9001", "http://127.0.0.1:9001"),  # noqa: S104 - every interface
        ("192.0.2.7", "8080", "http://192.0.2.7:8080"),
    ],
)
def test_development_links_name_the_address_the_app_is_served_at(
    tmp_path, monkeypatch, host, port, expected
):
    for name, value in (("HOST", host), ("PORT", port)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    app = development_app(tmp_path, PUBLIC_BASE_URL="")
    assert app.config["PUBLIC_BASE_URL"] == expected


def test_a_set_public_base_url_is_kept_in_development(tmp_path, monkeypatch):
    monkeypatch.setenv("PORT", "9000")
    app = development_app(tmp_path, PUBLIC_BASE_URL="https://dev.example.org")
    assert app.config["PUBLIC_BASE_URL"] == "https://dev.example.org"


def development_app(tmp_path, **settings):
    return create_app(
        {"SQLALCHEMY_DATABASE_URI": "sqlite://", "DEV_KEYS_FILE": tmp_path / "keys.json"} | settings
    )


def test_development_runs_on_defaults(tmp_path):
    app = development_app(tmp_path)
    assert app.config["ENV_NAME"] == "development"


def test_development_makes_its_own_private_random_keys_on_first_start(tmp_path):
    app = development_app(tmp_path)
    keys = [app.config[name] for name in SECRET_SETTINGS]
    assert DEV_SECRET not in keys
    assert len(set(keys)) == len(keys)
    assert all(len(key) >= 32 for key in keys)
    path = tmp_path / "keys.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == dict(zip(SECRET_SETTINGS, keys, strict=True))


def test_later_starts_and_other_workers_use_the_same_keys(tmp_path):
    first = development_app(tmp_path)
    again = development_app(tmp_path)
    for name in SECRET_SETTINGS:
        assert again.config[name] == first.config[name]


def test_workers_starting_together_agree_on_one_set_of_keys(tmp_path):
    barrier = threading.Barrier(4)
    made: list[dict[str, str]] = []

    def start() -> None:
        barrier.wait()
        made.append(development_keys(tmp_path / "keys.json", SECRET_SETTINGS))

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 4
    assert all(keys == made[0] for keys in made)


def test_tokens_are_not_signed_with_the_public_default_key(tmp_path):
    app = development_app(tmp_path)
    with app.app_context():
        token = create_access_token(identity="someone")
        jwt.decode(token, app.config["JWT_SECRET_KEY"], algorithms=["HS256"])
        with pytest.raises(jwt.InvalidSignatureError):
            jwt.decode(token, DEV_SECRET, algorithms=["HS256"])


def test_keys_given_in_the_environment_are_used_and_not_written(tmp_path):
    app = development_app(
        tmp_path,
        SECRET_KEY=STRONG,
        JWT_SECRET_KEY=STRONG + "j",
        TRACKABLE_CODE_KEY=STRONG + "t",
        WEBHOOK_SECRETS_KEY=STRONG + "w",
    )
    assert app.config["SECRET_KEY"] == STRONG
    assert not (tmp_path / "keys.json").exists()


def test_tests_and_production_never_make_keys(tmp_path):
    create_app(
        {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": "sqlite://",
            "DEV_KEYS_FILE": tmp_path / "keys.json",
        }
    )
    with pytest.raises(InsecureConfiguration):
        development_app(tmp_path, ENV_NAME="production")
    assert not (tmp_path / "keys.json").exists()


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("postgres://u@h/db", "postgresql+psycopg2://u@h/db"),
        ("postgresql://u@h/db", "postgresql+psycopg2://u@h/db"),
        ("postgresql+psycopg2://u@h/db", "postgresql+psycopg2://u@h/db"),
        ("sqlite:///x.db", "sqlite:///x.db"),
    ],
)
def test_postgres_urls_use_the_installed_driver(given, expected):
    assert normalize_database_url(given) == expected
