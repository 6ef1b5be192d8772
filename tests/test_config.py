"""Settings: development defaults, refused in production."""

from __future__ import annotations

import pytest

from app import InsecureConfiguration, create_app
from config import DEV_SECRET, normalize_database_url

STRONG = "x" * 40


def test_production_refuses_default_secrets_and_names_them():
    with pytest.raises(InsecureConfiguration) as error:
        create_app({"ENV_NAME": "production", "SQLALCHEMY_DATABASE_URI": "sqlite://"})
    message = str(error.value)
    for name in ("SECRET_KEY", "JWT_SECRET_KEY", "TRACKABLE_CODE_KEY"):
        assert name in message


def test_production_refuses_short_secrets():
    with pytest.raises(InsecureConfiguration, match="at least 32"):
        create_app(
            {
                "ENV_NAME": "production",
                "SQLALCHEMY_DATABASE_URI": "sqlite://",
                "SECRET_KEY": "short",
                "JWT_SECRET_KEY": STRONG,
                "TRACKABLE_CODE_KEY": STRONG,
            }
        )


def test_production_starts_with_real_secrets():
    app = create_app(
        {
            "ENV_NAME": "production",
            "SQLALCHEMY_DATABASE_URI": "sqlite://",
            "SECRET_KEY": STRONG,
            "JWT_SECRET_KEY": STRONG + "j",
            "TRACKABLE_CODE_KEY": STRONG + "t",
        }
    )
    assert app.config["SECRET_KEY"] != DEV_SECRET


def test_development_runs_on_defaults():
    app = create_app({"SQLALCHEMY_DATABASE_URI": "sqlite://"})
    assert app.config["ENV_NAME"] == "development"


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
