"""WEBHOOK_SECRETS_KEY rotates: the keys it replaced still open the stored signing secrets,
`flask webhooks rotate-secrets-key` seals them anew under the new key (and may run again),
and a start whose keys open none of them is refused, saying what would break."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cryptography.fernet import InvalidToken
from sqlalchemy import select

from app import InsecureConfiguration, create_app
from app.extensions import db
from app.models.webhook import WebhookSubscription
from app.services import webhooks
from app.services.webhooks import signing
from app.services.webhooks.subscriptions import signing_secrets
from tests.factories import make_user
from tests.receivers import subscribe

OLD = "old-webhook-key-" + "o" * 40
NEW = "new-webhook-key-" + "n" * 40
URL = "https://hooks.example.org/in"


@pytest.fixture
def sealed_under_old(api, app, monkeypatch):
    """Two subscriptions made while OLD sealed, their secrets as answered."""
    monkeypatch.setitem(app.config, "WEBHOOK_SECRETS_KEY", OLD)
    monkeypatch.setitem(app.config, "WEBHOOK_SECRETS_KEYS_PREVIOUS", [])
    user = make_user()
    secrets = {}
    for _ in range(2):
        created = subscribe(api, user, URL)
        secrets[created["webhookId"]] = created["secret"]
    return secrets


def secrets_now(config) -> dict[str, str]:
    now = datetime.now(UTC)
    rows = db.session.scalars(select(WebhookSubscription))
    return {str(row.id): signing_secrets(row, config, now)[0] for row in rows}


def rotate(app) -> str:
    result = app.test_cli_runner().invoke(args=["webhooks", "rotate-secrets-key"])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_rotation_keeps_every_secret_and_ends_under_the_new_key(app, sealed_under_old):
    app.config.update(WEBHOOK_SECRETS_KEY=NEW, WEBHOOK_SECRETS_KEYS_PREVIOUS=[OLD])
    assert secrets_now(app.config) == sealed_under_old  # the overlap: deliveries still sign
    output = rotate(app)
    assert "2 secrets to seal" in output
    assert "done: 0 left under older keys" in output
    assert "0 secrets to seal" in rotate(app)  # stopped or not, it can run again
    alone = {"WEBHOOK_SECRETS_KEY": NEW}
    assert secrets_now(alone) == sealed_under_old  # the old key can go
    with pytest.raises(InvalidToken):
        secrets_now({"WEBHOOK_SECRETS_KEY": OLD})


def test_a_rotation_without_the_old_key_listed_is_refused(app, sealed_under_old):
    app.config.update(WEBHOOK_SECRETS_KEY=NEW, WEBHOOK_SECRETS_KEYS_PREVIOUS=[])
    result = app.test_cli_runner().invoke(args=["webhooks", "rotate-secrets-key"])
    assert result.exit_code != 0
    assert "WEBHOOK_SECRETS_KEYS_PREVIOUS" in result.output


def test_keys_that_open_no_stored_secret_are_refused_with_what_would_break(sealed_under_old):
    with pytest.raises(webhooks.SecretsKeyMismatch) as refused:
        webhooks.check_secrets_key({"WEBHOOK_SECRETS_KEY": NEW})
    message = str(refused.value)
    assert signing.key_fingerprint(NEW) in message
    assert "2 subscriptions would all fail" in message
    assert NEW not in message
    assert webhooks.check_secrets_key({"WEBHOOK_SECRETS_KEY": OLD}) == 2
    both = {"WEBHOOK_SECRETS_KEY": NEW, "WEBHOOK_SECRETS_KEYS_PREVIOUS": [OLD]}
    assert webhooks.check_secrets_key(both) == 2


def test_the_app_refuses_to_start_with_a_key_that_opens_no_stored_secret(
    sealed_under_old, database_url, tmp_path
):
    db.session.commit()
    settings = {
        "ENV_NAME": "development",
        "SQLALCHEMY_DATABASE_URI": database_url,
        "DEV_KEYS_FILE": tmp_path / "keys.json",
        "RATELIMIT_STORAGE_URI": "memory://",
    }
    with pytest.raises(InsecureConfiguration, match="rotate-secrets-key"):
        create_app({**settings, "WEBHOOK_SECRETS_KEY": NEW})
    started = create_app(
        {**settings, "WEBHOOK_SECRETS_KEY": NEW, "WEBHOOK_SECRETS_KEYS_PREVIOUS": [OLD]}
    )
    assert started.config["WEBHOOK_SECRETS_KEY"] == NEW
