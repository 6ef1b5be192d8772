"""Webhooks: users, and team admins for their team, subscribe URLs to event
types; each event their inbox (or their team) hears of is POSTed to them, signed as
Standard Webhooks 1.0 says, by the worker (`JOB_KINDS`), retried for about a day. The
face other areas and the factory call."""

from app.services.webhooks.delivery import (
    JOB_KINDS,
    TEST_EVENT,
    list_deliveries,
    on_event,
    payload,
    redeliver,
    remove_old_deliveries,
    send_test,
)
from app.services.webhooks.secrets_key import (
    SecretsKeyMismatch,
    check_secrets_key,
    reseal_batch,
    sealed_under_older_keys,
)
from app.services.webhooks.subscriptions import (
    WebhookView,
    create_webhook,
    delete_account_webhooks,
    delete_webhook,
    get_webhook,
    list_webhooks,
    remove_team_webhooks,
    rotate_secret,
    update_webhook,
)

__all__ = [
    "JOB_KINDS",
    "TEST_EVENT",
    "SecretsKeyMismatch",
    "WebhookView",
    "check_secrets_key",
    "create_webhook",
    "delete_account_webhooks",
    "delete_webhook",
    "get_webhook",
    "list_deliveries",
    "list_webhooks",
    "on_event",
    "payload",
    "redeliver",
    "remove_old_deliveries",
    "remove_team_webhooks",
    "reseal_batch",
    "rotate_secret",
    "sealed_under_older_keys",
    "send_test",
    "update_webhook",
]
