"""Signing secrets and signatures (Standard Webhooks 1.0).

A secret is `whsec_` and the base64 of 32 random bytes; the signature of a message is
`v1,` and the base64 of HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`, keyed
with the secret's decoded bytes. While a rotation runs, each secret signs and the header
carries both signatures, separated by a space.

Secrets are stored encrypted (Fernet: AES-CBC with an HMAC) under a key derived from the
setting WEBHOOK_SECRETS_KEY alone, so neither the database nor SECRET_KEY reveals them; the
keys it replaced (WEBHOOK_SECRETS_KEYS_PREVIOUS) still open what they sealed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterable, Mapping
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

SECRET_PREFIX = "whsec_"  # noqa: S105 - the specification's prefix, not a secret
SECRET_BYTES = 32


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def _key(setting: str) -> Fernet:
    # Any long random text is a valid setting: the Fernet key is its SHA-256, labelled.
    digest = hashlib.sha256(b"webhook-secrets:" + setting.encode())
    return Fernet(base64.urlsafe_b64encode(digest.digest()))


def _fernet(config: Mapping[str, Any]) -> MultiFernet:
    """Seals under WEBHOOK_SECRETS_KEY; unseals under it or any WEBHOOK_SECRETS_KEYS_PREVIOUS
    (a rotation: `flask webhooks rotate-secrets-key` then seals every secret anew)."""
    settings = [config["WEBHOOK_SECRETS_KEY"], *config.get("WEBHOOK_SECRETS_KEYS_PREVIOUS", ())]
    return MultiFernet([_key(str(setting)) for setting in settings])


def key_fingerprint(setting: str) -> str:
    """A key's public name in messages: reveals nothing of the key."""
    return hashlib.sha256(b"webhook-secrets key id:" + setting.encode()).hexdigest()[:12]


def sealed_under_current(sealed: str, config: Mapping[str, Any]) -> bool:
    """Whether the current key alone opens `sealed` (nothing left to re-seal)."""
    try:
        _key(str(config["WEBHOOK_SECRETS_KEY"])).decrypt(sealed.encode("ascii"))
    except InvalidToken:
        return False
    return True


def reseal(sealed: str, config: Mapping[str, Any]) -> str:
    """`sealed` under the current key (opened with any configured one; InvalidToken if none)."""
    return _fernet(config).rotate(sealed.encode("ascii")).decode("ascii")


def seal(secret: str, config: Mapping[str, Any]) -> str:
    """The secret, encrypted for storage."""
    return _fernet(config).encrypt(secret.encode("ascii")).decode("ascii")


def unseal(sealed: str, config: Mapping[str, Any]) -> str:
    """The stored secret in clear (InvalidToken when the key changed)."""
    return _fernet(config).decrypt(sealed.encode("ascii")).decode("ascii")


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """One `v1,<base64>` signature of the message."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def headers(
    message_id: str, timestamp: int, body: bytes, signing_secrets: Iterable[str]
) -> dict[str, str]:
    """The Standard Webhooks headers of a delivery, signed with each secret."""
    signatures = " ".join(signature(one, message_id, timestamp, body) for one in signing_secrets)
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signatures,
        "Content-Type": "application/json",
    }
