"""Account management (contract: Identity and account): manage/info, manage/2fa and
DELETE /api/account, on the identity blueprint."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from flask import current_app

from app.api.identity.routes import blp
from app.api.identity.schemas import (
    AccountDeletionSchema,
    InfoSchema,
    InfoUpdateSchema,
    TwoFactorSchema,
    TwoFactorStatusSchema,
)
from app.auth import current_viewer
from app.extensions import db
from app.hooks import area_hooks
from app.services import identity

PREFERENCES = ("experience_mode", "map_source")


@blp.route("/auth/manage/info", methods=["GET"])
@blp.auth()
@blp.response(200, InfoSchema)
def get_account_info() -> dict[str, Any]:
    """Get the account's email, confirmation state and saved preferences"""
    return identity.account_info(current_viewer())


@blp.route("/auth/manage/info", methods=["POST"])
@blp.auth()
@blp.arguments(InfoUpdateSchema)
@blp.response(200, InfoSchema)
def update_account_info(data: dict[str, Any]) -> dict[str, Any]:
    """Change password or email, or save preferences

    `newPassword` needs `oldPassword` and ends every session (sign in again). `newEmail`
    needs `oldPassword` too; a confirmation link goes to the new address, and the email
    changes when it is opened. `experienceMode` and `mapSource` save the preferences that
    GET /api/system/status reads; `null` clears one, an absent field leaves it. Nothing
    changes unless the whole request is valid. Answers the account info.
    """
    viewer = current_viewer()
    identity.update_account_info(
        viewer,
        config=current_app.config,
        new_email=data.get("new_email"),
        new_password=data.get("new_password"),
        old_password=data.get("old_password"),
        preferences={name: data[name] for name in PREFERENCES if name in data},
    )
    db.session.commit()
    return identity.account_info(viewer)


@blp.route("/auth/manage/2fa", methods=["POST"])
@blp.auth()
@blp.arguments(TwoFactorSchema)
@blp.response(200, TwoFactorStatusSchema)
def manage_two_factor(data: dict[str, Any]) -> dict[str, Any]:
    """Set up, enable, disable or reset two-factor sign-in

    An empty body `{}` reports the state (creating a shared key on first use: add it to
    an authenticator app as base32). `enable: true` needs a valid `twoFactorCode`;
    `resetSharedKey` disables 2FA until a code of the new key is verified;
    `resetRecoveryCodes` returns ten new single-use codes (also on first enable);
    `forgetMachine` ends every session of the account.
    """
    status = identity.manage_two_factor(current_viewer(), config=current_app.config, **data)
    db.session.commit()
    return status


@blp.route("/account", methods=["DELETE"])
@blp.auth(exclusive_account=True)
@blp.response(200, AccountDeletionSchema)
def delete_my_account() -> dict[str, Any]:
    """Delete the account and its personal data

    Removes the user's personal data and personal trackable activity; shared and
    team-owned trackables and other users' history stay. Every token stops working.
    """
    counts = identity.delete_my_account(
        current_viewer(), config=current_app.config, cleanups=area_hooks().account_cleanups
    )
    db.session.commit()
    return {"deleted_account": True, **asdict(counts)}
