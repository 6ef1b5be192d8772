"""Identity schemas: the shapes of the well-known identity API (MapIdentityApi) that existing
clients expect, field for field, plus the saved preferences on manage/info."""

from __future__ import annotations

from typing import Any

from email_validator import EmailNotValidError, validate_email
from marshmallow import ValidationError, fields, pre_load, validate

from app.api.base import Guid, Regexp, RequestSchema, Schema
from app.services.identity import USER_NAME
from app.services.system import EXPERIENCE_MODES, MAP_SOURCES

EMAIL_MAX_LENGTH = 254  # RFC 5321 path limit; the users.email column's size
# Bounds on what a client may send in fields the service only compares or hashes (a
# password, a code, a token): far above any real value, stated in the document, and a
# 400 before a huge string reaches the hashing or the look-ups.
SECRET_MAX_LENGTH = 1024
CODE_MAX_LENGTH = 64


def bounded(max_length: int, **kwargs: Any) -> fields.String:
    """A string field with a documented maximum length."""
    return fields.String(validate=validate.Length(max=max_length), **kwargs)


class EmailAddress(fields.String):
    """An email address checked for syntax (no DNS look-up), returned in normalized form."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("metadata", {"example": "ada@example.com"})
        # Stated in the document too (`maxLength`): a client, or a generator of valid
        # input, knows the bound before the request line outgrows the server's limit.
        kwargs.setdefault("validate", validate.Length(max=EMAIL_MAX_LENGTH))
        super().__init__(**kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs).strip()
        if len(text) > EMAIL_MAX_LENGTH:
            raise ValidationError(f"Email addresses are at most {EMAIL_MAX_LENGTH} characters.")
        try:
            return validate_email(text, check_deliverability=False).normalized
        except EmailNotValidError as error:
            raise ValidationError(f"Email '{text}' is invalid: {error}") from None


class RegisterSchema(RequestSchema):
    read_models = ()  # the account's record is manage/info's, read after signing in

    email = EmailAddress(required=True)
    user_name = fields.String(
        required=True,
        validate=Regexp(
            USER_NAME, error="User names are 3-32 lowercase letters, digits or underscores."
        ),
        metadata={"example": "ada_walks"},
    )
    password = fields.String(
        required=True,
        metadata={"example": "my-own-long-passphrase-7", "description": "8-128 characters."},
    )


class LoginQuerySchema(Schema):
    use_cookies = fields.Boolean(
        load_default=False,
        metadata={"description": "Must be false: this API signs in with bearer tokens only."},
    )
    use_session_cookies = fields.Boolean(
        load_default=False,
        metadata={"description": "Must be false: no session cookies either (400 otherwise)."},
    )


class LoginSchema(RequestSchema):
    read_models = ()

    email = bounded(EMAIL_MAX_LENGTH, required=True, metadata={"example": "ada@example.com"})
    password = bounded(
        SECRET_MAX_LENGTH, required=True, metadata={"example": "my-own-long-passphrase-7"}
    )
    two_factor_code = bounded(
        CODE_MAX_LENGTH,
        allow_none=True,
        metadata={"example": "123456", "description": "TOTP code when 2FA is on."},
    )
    two_factor_recovery_code = bounded(
        CODE_MAX_LENGTH,
        allow_none=True,
        metadata={"example": "7K3M9-Q2T4X", "description": "Single-use; instead of a code."},
    )


class RefreshSchema(RequestSchema):
    read_models = ()

    refresh_token = bounded(
        SECRET_MAX_LENGTH,
        required=True,
        metadata={"example": "CfDJ8N2x...single-use-opaque-token"},
    )


class AccessTokenSchema(Schema):
    token_type = fields.String(required=True, metadata={"example": "Bearer"})
    access_token = fields.String(
        required=True, metadata={"example": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9..."}
    )
    expires_in = fields.Integer(
        required=True, metadata={"example": 3600, "description": "Seconds."}
    )
    refresh_token = fields.String(
        required=True, metadata={"example": "CfDJ8N2x...single-use-opaque-token"}
    )


class ConfirmEmailQuerySchema(Schema):
    user_id = Guid(required=True, metadata={"example": "3f2c8a5e-4b7d-4c1e-9a2f-5d6e7f8a9b0c"})
    code = bounded(SECRET_MAX_LENGTH, required=True, metadata={"example": "eyJ1IjoiM2YyYzhh..."})
    changed_email = EmailAddress(load_default=None, metadata={"example": "ada.new@example.com"})


class EmailSchema(RequestSchema):
    read_models = ()

    email = bounded(EMAIL_MAX_LENGTH, required=True, metadata={"example": "ada@example.com"})


class ResetPasswordSchema(RequestSchema):
    read_models = ()

    email = bounded(EMAIL_MAX_LENGTH, required=True, metadata={"example": "ada@example.com"})
    reset_code = bounded(
        SECRET_MAX_LENGTH, required=True, metadata={"example": "eyJ1IjoiM2YyYzhh..."}
    )
    new_password = bounded(
        SECRET_MAX_LENGTH, required=True, metadata={"example": "another-long-passphrase-8"}
    )


class InfoSchema(Schema):
    email = fields.String(required=True, metadata={"example": "ada@example.com"})
    is_email_confirmed = fields.Boolean(required=True, metadata={"example": True})
    experience_mode = fields.String(
        required=True,
        allow_none=True,
        metadata={"example": "latest_and_greatest", "description": "Saved preference."},
    )
    map_source = fields.String(
        required=True,
        allow_none=True,
        metadata={"example": "hosted_maps", "description": "Saved preference."},
    )


class InfoUpdateSchema(RequestSchema):
    read_models = (InfoSchema,)

    @pre_load
    def blank_is_absent(self, data: Any, **kwargs: Any) -> Any:
        """An empty string means "no change", as clients of this identity API send it."""
        if isinstance(data, dict):
            blanks = ("newEmail", "newPassword", "oldPassword")
            return {key: value for key, value in data.items() if key not in blanks or value}
        return data

    new_email = EmailAddress(
        allow_none=True,
        metadata={"example": "ada.new@example.com", "description": "Confirmed by mail."},
    )
    new_password = bounded(
        SECRET_MAX_LENGTH, allow_none=True, metadata={"example": "another-long-passphrase-8"}
    )
    old_password = bounded(
        SECRET_MAX_LENGTH,
        allow_none=True,
        metadata={
            "example": "my-own-long-passphrase-7",
            "description": "The current password: needed for newPassword and newEmail.",
        },
    )
    experience_mode = fields.String(
        allow_none=True,
        validate=validate.OneOf(EXPERIENCE_MODES),
        metadata={"example": "no_3rd_parties", "description": "null clears the preference."},
    )
    map_source = fields.String(
        allow_none=True,
        validate=validate.OneOf(MAP_SOURCES),
        metadata={"example": "openstreetmap", "description": "null clears the preference."},
    )


class TwoFactorStatusSchema(Schema):
    shared_key = fields.String(
        required=True, metadata={"example": "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"}
    )
    recovery_codes_left = fields.Integer(required=True, metadata={"example": 10})
    recovery_codes = fields.List(
        fields.String(),
        required=True,
        allow_none=True,
        metadata={
            "example": ["7K3M9-Q2T4X", "B8N2P-4RX7Z"],
            "description": "Only when new codes were generated by this request; else null.",
        },
    )
    is_two_factor_enabled = fields.Boolean(required=True, metadata={"example": True})
    is_machine_remembered = fields.Boolean(
        required=True, metadata={"example": False, "description": "Always false: bearer clients."}
    )


class TwoFactorSchema(RequestSchema):
    read_models = (TwoFactorStatusSchema,)

    enable = fields.Boolean(allow_none=True, metadata={"example": True})
    two_factor_code = bounded(CODE_MAX_LENGTH, allow_none=True, metadata={"example": "123456"})
    reset_shared_key = fields.Boolean(load_default=False, metadata={"example": False})
    reset_recovery_codes = fields.Boolean(load_default=False, metadata={"example": False})
    forget_machine = fields.Boolean(load_default=False, metadata={"example": False})


class AccountDeletionSchema(Schema):
    deleted_account = fields.Boolean(required=True, metadata={"example": True})
    notes_deleted = fields.Integer(required=True, metadata={"example": 12})
    categories_deleted = fields.Integer(required=True, metadata={"example": 3})
    linked_providers_deleted = fields.Integer(required=True, metadata={"example": 0})
    images_deleted = fields.Integer(
        required=True,
        metadata={"example": 2, "description": "Images of the account's profile and content."},
    )
