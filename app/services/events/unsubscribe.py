"""One-click unsubscribe from notification mail (RFC 8058): each mail's link sets its
recipient's mail to `none`, without signing in (docs/contract/website.md, Mail settings).

The token names the account and carries an HMAC of its id under a key derived from the
records key (app.platform.secret_keys), so it cannot be forged, one account's token never
changes another, and a SECRET_KEY rotation leaves it valid. It does not expire; it ends
with the account.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from app.extensions import db
from app.models.notification_mail import MailChoice
from app.models.user import User
from app.platform.database import get_for_write
from app.platform.secret_keys import record_key
from app.services.events.mail_settings import MailSettings, apply_mail_settings, mail_settings_of

PURPOSE = "mail-unsubscribe"  # the purpose of its HMAC key (secret_keys.record_key)


class LinkState(StrEnum):
    VALID = "valid"
    INVALID = "invalid"  # not a token of ours: cut short, changed or made up
    ACCOUNT_GONE = "account_gone"  # a true token of an account deleted since


@dataclass(frozen=True)
class UnsubscribeLink:
    """What an unsubscribe token stands for: its state, and the account's mail settings
    when it is valid (after the change, for `unsubscribe`)."""

    state: LinkState
    settings: MailSettings | None = None


def unsubscribe_token(user_id: uuid.UUID, config: Mapping[str, Any]) -> str:
    """The account's token: its id in hex, a dot, the HMAC in URL-safe base64."""
    return f"{user_id.hex}.{_mac(user_id, config)}"


def _mac(user_id: uuid.UUID, config: Mapping[str, Any]) -> str:
    # The purpose is in the message too: without RECORDS_KEY every purpose's key is SECRET_KEY.
    message = PURPOSE.encode() + b":" + user_id.bytes
    digest = hmac.new(record_key(config, PURPOSE), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _account_of(token: str, config: Mapping[str, Any]) -> uuid.UUID | None:
    """The account a token names, or None when it is not one of ours."""
    head, dot, mac = token.partition(".")
    try:
        user_id = uuid.UUID(hex=head)
    except ValueError:
        return None
    if not dot or user_id.hex != head:
        return None
    if not hmac.compare_digest(mac.encode(), _mac(user_id, config).encode()):
        return None
    return user_id


def read_unsubscribe_link(token: str, config: Mapping[str, Any]) -> UnsubscribeLink:
    """What the link stands for; changes nothing (a mail scanner opening it, a GET)."""
    user_id = _account_of(token, config)
    if user_id is None:
        return UnsubscribeLink(LinkState.INVALID)
    if db.session.get(User, user_id) is None:
        return UnsubscribeLink(LinkState.ACCOUNT_GONE)
    return UnsubscribeLink(LinkState.VALID, mail_settings_of(user_id))


def unsubscribe(token: str, config: Mapping[str, Any]) -> UnsubscribeLink:
    """The token's account gets no notification mail from now on (its setting becomes
    `none`, the language stays); a second time changes nothing. Mail already queued is
    dropped when its job runs (services.events.mail decides when sending)."""
    user_id = _account_of(token, config)
    if user_id is None:
        return UnsubscribeLink(LinkState.INVALID)
    # Locked as the account's deletion locks it, so one at the same moment either came first
    # (gone) or waits for this change; never a settings row for an account just deleted.
    if get_for_write(db.session, User, user_id, exclusive=True) is None:
        return UnsubscribeLink(LinkState.ACCOUNT_GONE)
    return UnsubscribeLink(LinkState.VALID, apply_mail_settings(user_id, mail=MailChoice.NONE))
