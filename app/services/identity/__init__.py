"""Identity and accounts (contract: Identity; Authentication): register, sign in, tokens,
email codes, two-factor, account management and deletion; `JOB_KINDS` sends account
mail from a worker."""

from app.services.identity.account_mail import JOB_KINDS
from app.services.identity.accounts import (
    RESERVED_USER_NAMES,
    USER_NAME,
    account_info,
    confirm_email,
    delete_my_account,
    forgot_password,
    normalize_email,
    register,
    remove_identity_data,
    resend_confirmation,
    reset_password,
    update_account_info,
)
from app.services.identity.passwords import hash_password
from app.services.identity.sign_in import (
    FAILED,
    LOCKED_OUT,
    NOT_ALLOWED,
    REQUIRES_TWO_FACTOR,
    SignIn,
    sign_in,
)
from app.services.identity.tokens import rotate_refresh_token
from app.services.identity.two_factor import manage_two_factor

__all__ = [
    "FAILED",
    "JOB_KINDS",
    "LOCKED_OUT",
    "NOT_ALLOWED",
    "REQUIRES_TWO_FACTOR",
    "RESERVED_USER_NAMES",
    "USER_NAME",
    "SignIn",
    "account_info",
    "confirm_email",
    "delete_my_account",
    "forgot_password",
    "hash_password",
    "manage_two_factor",
    "normalize_email",
    "register",
    "remove_identity_data",
    "resend_confirmation",
    "reset_password",
    "rotate_refresh_token",
    "sign_in",
    "update_account_info",
]
