"""The webhook settings a production start refuses: the development secrets key, and the
tests-only loopback switch."""

from __future__ import annotations

import pytest

from app import InsecureConfiguration, create_app

STRONG = "x" * 40
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


def test_production_starts_with_its_own_webhook_secrets_key():
    assert create_app(PRODUCTION).config["WEBHOOK_SECRETS_KEY"] == STRONG + "w"


def test_production_refuses_the_development_webhook_secrets_key():
    settings = {key: value for key, value in PRODUCTION.items() if key != "WEBHOOK_SECRETS_KEY"}
    with pytest.raises(InsecureConfiguration, match="WEBHOOK_SECRETS_KEY"):
        create_app(settings)


def test_production_refuses_webhooks_to_loopback():
    with pytest.raises(InsecureConfiguration, match="WEBHOOKS_ALLOW_LOOPBACK"):
        create_app(PRODUCTION | {"WEBHOOKS_ALLOW_LOOPBACK": True})
