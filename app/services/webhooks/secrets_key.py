"""The key the webhook signing secrets are sealed under: a start whose key cannot open
them is refused with what would break, and a rotation re-seals them in batches
(`flask webhooks rotate-secrets-key`, which may be stopped and run again)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cryptography.fernet import InvalidToken
from sqlalchemy import func, inspect, select

from app.extensions import db
from app.models.webhook import WebhookSubscription
from app.platform.database import lock_rows
from app.services.webhooks import signing

PREVIOUS_SETTING = "WEBHOOK_SECRETS_KEYS_PREVIOUS"


class SecretsKeyMismatch(Exception):
    """The configured keys open none of the stored secrets they are asked to."""


def check_secrets_key(config: Mapping[str, Any]) -> int | None:
    """Raise SecretsKeyMismatch when the newest stored secret cannot be opened with the
    configured keys; the number of subscriptions otherwise (None: no table yet)."""
    if not inspect(db.engine).has_table(WebhookSubscription.__tablename__):
        return None
    newest = db.session.execute(
        select(WebhookSubscription.secret_encrypted)
        .order_by(WebhookSubscription.created_utc.desc())
        .limit(1)
    ).scalar_one_or_none()
    if newest is None:
        return 0
    try:
        signing.unseal(newest, config)
    except InvalidToken:
        count = db.session.scalar(select(func.count()).select_from(WebhookSubscription))
        fingerprint = signing.key_fingerprint(str(config["WEBHOOK_SECRETS_KEY"]))
        raise SecretsKeyMismatch(
            f"Refusing to start: WEBHOOK_SECRETS_KEY (fingerprint {fingerprint}) cannot open "
            f"the stored webhook signing secrets: deliveries of {count} subscription"
            f"{'' if count == 1 else 's'} would all fail. Start with the key they were "
            f"sealed with; to replace it, keep the old one in {PREVIOUS_SETTING} and run "
            "`flask webhooks rotate-secrets-key`."
        ) from None
    return int(db.session.scalar(select(func.count()).select_from(WebhookSubscription)) or 0)


def reseal_batch(config: Mapping[str, Any], batch_size: int, after: Any = None) -> tuple[int, Any]:
    """Re-seal under the current key up to `batch_size` subscriptions after id `after`
    (ids in order); (how many changed, the last id seen, None when done)."""
    query = select(WebhookSubscription).order_by(WebhookSubscription.id).limit(batch_size)
    if after is not None:
        query = query.where(WebhookSubscription.id > after)
    rows = lock_rows(db.session, query)  # an API rotation of one of them waits, or goes first
    changed = 0
    for row in rows:
        for column in ("secret_encrypted", "previous_secret_encrypted"):
            sealed = getattr(row, column)
            if sealed and not signing.sealed_under_current(sealed, config):
                setattr(row, column, signing.reseal(sealed, config))
                changed += 1
    return changed, (rows[-1].id if len(rows) == batch_size else None)


def sealed_under_older_keys(config: Mapping[str, Any]) -> int:
    """Secrets the current key alone cannot open yet."""
    rows = db.session.execute(
        select(WebhookSubscription.secret_encrypted, WebhookSubscription.previous_secret_encrypted)
    )
    return sum(
        1
        for row in rows
        for sealed in row
        if sealed and not signing.sealed_under_current(sealed, config)
    )
