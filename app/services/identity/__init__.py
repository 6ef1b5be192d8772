"""Identity and accounts (contract: Identity; Authentication): register, sign in, tokens,
website sessions, email codes, two-factor, account management and deletion; `JOB_KINDS`
sends account mail from a worker."""

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
from app.services.identity.devices import device_name
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
from app.services.identity.website_sessions import (
    LAST_USE_EVERY,
    AccountSessions,
    SessionView,
    SignedInBrowser,
    account_sessions,
    end_own_app_session,
    end_own_website_session,
    end_website_session,
    note_use,
    remove_expired_website_sessions,
    sign_out_everywhere,
    start_website_session,
    website_session_user,
)

__all__ = [
    "FAILED",
    "JOB_KINDS",
    "LAST_USE_EVERY",
    "LOCKED_OUT",
    "NOT_ALLOWED",
    "REQUIRES_TWO_FACTOR",
    "RESERVED_USER_NAMES",
    "USER_NAME",
    "AccountSessions",
    "SessionView",
    "SignIn",
    "SignedInBrowser",
    "account_info",
    "account_sessions",
    "confirm_email",
    "delete_my_account",
    "device_name",
    "end_own_app_session",
    "end_own_website_session",
    "end_website_session",
    "forgot_password",
    "hash_password",
    "manage_two_factor",
    "normalize_email",
    "note_use",
    "register",
    "remove_expired_website_sessions",
    "remove_identity_data",
    "resend_confirmation",
    "reset_password",
    "rotate_refresh_token",
    "sign_in",
    "sign_out_everywhere",
    "start_website_session",
    "update_account_info",
    "website_session_user",
]
