"""Two-factor sign-in: TOTP codes (RFC 6238, 30 s steps, one step of clock drift either way),
each usable once, and ten single-use recovery codes stored as keyed hashes
(decisions: Identity; POST /api/auth/manage/2fa mirrors the well-known identity API).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import pyotp
from sqlalchemy import delete, func, select

from app.auth import Viewer
from app.errors import ValidationFailed
from app.extensions import db
from app.models.base import utcnow
from app.models.identity import RecoveryCode
from app.models.user import User
from app.platform.secret_keys import earlier_record_key, record_hmac, record_key
from app.services.identity.tokens import end_sessions

RECOVERY_CODES = "recovery-codes"  # the purpose of their HMAC key (secret_keys.record_key)
RECOVERY_CODE_COUNT = 10
RECOVERY_CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRTVWXYZ"  # no I, L, O, S, U
TOTP_VALID_WINDOW = 1  # steps accepted either side of now (clock drift)

CANNOT_RESET_AND_ENABLE = (
    "Resetting the 2fa shared key must disable 2fa until a 2fa token based on the new "
    "shared key is validated."
)
CODE_REQUIRED = (
    "No 2fa token was provided by the request. A valid 2fa token is required to enable 2fa."
)
CODE_INVALID = (
    "The 2fa token provided by the request was invalid. A valid 2fa token is required to "
    "enable 2fa."
)


def normalize_code(code: str) -> str:
    return code.replace(" ", "").replace("-", "").strip().upper()


# --- TOTP --------------------------------------------------------------------------------


def matching_step(shared_key: str, code: str, at: datetime) -> int | None:
    """The time step whose TOTP equals `code`, within the allowed drift; else None."""
    code = normalize_code(code)
    if not code.isdigit():
        return None
    totp = pyotp.TOTP(shared_key)
    current = totp.timecode(at)
    for step in range(current - TOTP_VALID_WINDOW, current + TOTP_VALID_WINDOW + 1):
        if hmac.compare_digest(totp.generate_otp(step), code):
            return step
    return None


def accept_totp(user: User, code: str) -> bool:
    """True for a valid code of a step later than the last one accepted; records the step,
    so a code (or an older one) cannot be replayed."""
    if not user.two_factor_shared_key:
        return False
    step = matching_step(user.two_factor_shared_key, code, utcnow())
    if step is None or (
        user.two_factor_last_step is not None and step <= user.two_factor_last_step
    ):
        return False
    user.two_factor_last_step = step
    db.session.flush()
    return True


def assign_new_shared_key(user: User) -> None:
    user.two_factor_shared_key = pyotp.random_base32()
    user.two_factor_last_step = None


# --- recovery codes ----------------------------------------------------------------------


def _code_hash(code: str, key: bytes) -> str:
    return record_hmac(key, b"recovery-code:" + normalize_code(code).encode())


def new_recovery_code() -> str:
    groups = ("".join(secrets.choice(RECOVERY_CODE_ALPHABET) for _ in range(5)) for _ in "ab")
    return "-".join(groups)


def generate_recovery_codes(user: User, *, config: Mapping[str, Any]) -> list[str]:
    """Replace the user's recovery codes with ten new ones; returns them in clear, once."""
    db.session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))
    codes = [new_recovery_code() for _ in range(RECOVERY_CODE_COUNT)]
    key = record_key(config, RECOVERY_CODES)
    db.session.add_all(
        RecoveryCode(user_id=user.id, code_hash=_code_hash(code, key)) for code in codes
    )
    db.session.flush()
    return codes


def redeem_recovery_code(user: User, code: str, *, config: Mapping[str, Any]) -> bool:
    """Use up a recovery code: True (and the code is deleted) when it was one of the user's.
    A code is checked under its purpose's key and, for codes made before RECORDS_KEY was
    set, under the key they were made with (app.platform.secret_keys)."""
    keys = [record_key(config, RECOVERY_CODES), earlier_record_key(config)]
    found = db.session.scalar(
        select(RecoveryCode).where(
            RecoveryCode.user_id == user.id,
            RecoveryCode.code_hash.in_([_code_hash(code, key) for key in keys if key]),
        )
    )
    if found is None:
        return False
    db.session.delete(found)
    db.session.flush()
    return True


def recovery_codes_left(user: User) -> int:
    return (
        db.session.scalar(
            select(func.count()).select_from(RecoveryCode).where(RecoveryCode.user_id == user.id)
        )
        or 0
    )


def delete_recovery_codes(user: User) -> None:
    db.session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))


# --- POST /api/auth/manage/2fa -----------------------------------------------------------


def manage_two_factor(
    viewer: Viewer,
    *,
    config: Mapping[str, Any],
    enable: bool | None = None,
    two_factor_code: str | None = None,
    reset_shared_key: bool = False,
    reset_recovery_codes: bool = False,
    forget_machine: bool = False,
) -> dict[str, Any]:
    """Enable (with a valid code), disable, reset the key (which disables 2FA until a new
    code is verified), regenerate recovery codes, forget this machine; then report."""
    user = viewer.account
    if enable:
        if reset_shared_key:
            raise ValidationFailed({"resetSharedKey": [CANNOT_RESET_AND_ENABLE]})
        if not two_factor_code:
            raise ValidationFailed({"twoFactorCode": [CODE_REQUIRED]})
        if not accept_totp(user, two_factor_code):
            raise ValidationFailed({"twoFactorCode": [CODE_INVALID]})
        user.is_two_factor_enabled = True
    elif enable is False or reset_shared_key:
        user.is_two_factor_enabled = False
    if reset_shared_key:
        assign_new_shared_key(user)
    recovery_codes: list[str] | None = None
    if reset_recovery_codes or (enable and recovery_codes_left(user) == 0):
        recovery_codes = generate_recovery_codes(user, config=config)
    if forget_machine:
        # Bearer clients have no remembered machine; forgetting ends every session instead.
        end_sessions(user)
    if not user.two_factor_shared_key:
        assign_new_shared_key(user)
    db.session.flush()
    return {
        "shared_key": user.two_factor_shared_key,
        "recovery_codes_left": (
            len(recovery_codes) if recovery_codes is not None else recovery_codes_left(user)
        ),
        "recovery_codes": recovery_codes,
        "is_two_factor_enabled": user.is_two_factor_enabled,
        "is_machine_remembered": False,
    }
