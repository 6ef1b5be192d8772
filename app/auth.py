"""Bearer tokens and the Viewer: who is calling, built once per request.

Access tokens carry the user's id (`sub`) and security stamp (`stamp`). A token whose user
no longer exists, or whose stamp changed (password change, account deletion, "forget
machine"), stops working at the next request.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Any

from flask import Flask, Response, current_app, g, has_request_context, request
from flask_jwt_extended import create_access_token, verify_jwt_in_request
from flask_jwt_extended.exceptions import NoAuthorizationError
from sqlalchemy import event, select
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import ORMExecuteState, Session

from app.error_codes import Code
from app.errors import Unauthorized, problem
from app.extensions import db, jwt
from app.hooks import ViewerPart, area_hooks
from app.models.team import TeamRole
from app.models.user import User
from app.platform.database import (
    RoutingSession,
    begin_immediate,
    get_by_driver,
    get_for_write,
    on_write_lock,
)


class Viewer:
    """The caller of one request. Services take it as an argument; policies read it.

    What the areas add (`team_roles`, `unlocked_trackable_ids`, `access_sessions`;
    app.hooks) is read from the database the first time a policy asks for it, then kept:
    a request that never asks (a health check, the account's own info, anonymous
    discovery) spends no round trip on it. Values given when building the viewer are used as given.
    """

    __slots__ = ("_parts", "_values", "is_superadmin", "user")

    def __init__(
        self,
        user: User | None = None,
        is_superadmin: bool = False,
        *,
        parts: Sequence[ViewerPart] = (),
        **given: Any,
    ) -> None:
        self.user = user
        self.is_superadmin = is_superadmin
        self._parts: Sequence[ViewerPart] | None = parts or None
        self._values: dict[str, Any] = dict(given)

    def _value(self, key: str, default: Any) -> Any:
        parts, self._parts = self._parts, None
        if parts is not None:
            given = set(self._values)
            for part in parts:
                for name, value in part(self.user).items():
                    if name in given:
                        continue
                    if isinstance(value, frozenset) and name in self._values:
                        value = self._values[name] | value
                    self._values[name] = value
        return self._values.get(key, default)

    @property
    def unlocked_trackable_ids(self) -> frozenset[uuid.UUID]:
        value: frozenset[uuid.UUID] = self._value("unlocked_trackable_ids", frozenset())
        return value

    @property
    def access_sessions(self) -> Mapping[uuid.UUID, uuid.UUID]:
        """This client's access sessions (its cookie): trackable id -> session id."""
        value: Mapping[uuid.UUID, uuid.UUID] = self._value("access_sessions", {})
        return value

    @property
    def team_roles(self) -> Mapping[uuid.UUID, TeamRole]:
        """Active team memberships: team id -> role."""
        value: Mapping[uuid.UUID, TeamRole] = self._value("team_roles", {})
        return value

    @property
    def user_id(self) -> uuid.UUID | None:
        return self.user.id if self.user is not None else None

    @property
    def account(self) -> User:
        """The signed-in user, for use cases whose routes `@blp.auth()` guards: sign-in is
        required there, once, and its absence here is a programming error, not a 401."""
        if self.user is None:
            raise LookupError("This use case needs a signed-in viewer (a guarded route).")
        return self.user

    @property
    def is_authenticated(self) -> bool:
        return self.user is not None

    def is_member_of(self, team_id: uuid.UUID | None) -> bool:
        return team_id is not None and team_id in self.team_roles

    def is_admin_of(self, team_id: uuid.UUID | None) -> bool:
        return team_id is not None and self.team_roles.get(team_id) == TeamRole.ADMIN


ANONYMOUS = Viewer()


def build_viewer(user: User | None, **given: Any) -> Viewer:
    """The Viewer of `user`, with every area's part (sets of ids are merged), read when
    first needed; `given` values stand instead of the parts' for their keys."""
    # Areas add to the Viewer without this module knowing them (app.hooks): the teams area
    # adds `team_roles`, the notes area the account's `unlocked_trackable_ids`.
    return Viewer(
        user,
        bool(user and user.is_superadmin),
        parts=area_hooks().viewer_parts,
        **given,
    )


def current_viewer() -> Viewer:
    """The Viewer of this request (anonymous when no valid token was sent)."""
    if not has_request_context():
        return ANONYMOUS
    viewer = g.get("viewer")
    if viewer is None:
        if not g.get("token_checked"):
            with suppress(NoAuthorizationError):
                verify_jwt_in_request(optional=True)
            g.token_checked = True
        viewer = build_viewer(g.get("token_user"))
        g.viewer = viewer
    return viewer


def issue_access_token(user: User) -> str:
    """Signed with JWT_SECRET_KEY, whose fingerprint the header names (`kid`), so that a
    rotation can still verify tokens signed before it (`signing_key_for`)."""
    return create_access_token(
        identity=str(user.id),
        additional_claims={"stamp": user.security_stamp},
        additional_headers={"kid": key_id(current_app.config["JWT_SECRET_KEY"])},
    )


def key_id(key: str) -> str:
    """A signing key's public name: a fingerprint that reveals nothing of the key."""
    return hashlib.sha256(b"location-notes jwt key id\0" + key.encode()).hexdigest()[:16]


def signing_key_for(header: Mapping[str, Any]) -> str:
    """The key that verifies a token: the one its `kid` names among JWT_SECRET_KEY and
    JWT_SECRET_KEYS_PREVIOUS; the current key when it names none (its signature then
    decides: a key no longer listed verifies nothing)."""
    current = current_app.config["JWT_SECRET_KEY"]
    for key in (current, *current_app.config.get("JWT_SECRET_KEYS_PREVIOUS", ())):
        if header.get("kid") == key_id(key):
            return str(key)
    return str(current)


def _bearer_problem(detail: str, *, code: Code, error: str = "invalid_token") -> Response:
    """401 with the registered `code`; `error` is RFC 6750's, for WWW-Authenticate."""
    header = f'Bearer error="{error}"' if error else "Bearer"
    return problem(401, detail, code=code, headers={"WWW-Authenticate": header})


def _load_token_user(payload: Mapping[str, Any]) -> User | None:
    """The user a decoded token names, looked up once per request."""
    cache_key = ("token_user", payload.get("sub"))
    if g.get("token_user_key") == cache_key:
        return g.get("token_user")
    try:
        user_id = uuid.UUID(str(payload.get("sub")))
    except ValueError:
        user = None
    else:
        user = _read_account(user_id)
    g.token_user_key, g.token_user = cache_key, user
    return user


def _read_account(user_id: uuid.UUID) -> User | None:
    if is_write_request():
        # A write: its transaction starts with the account, locked until it ends, so a
        # deletion of the account waits for the write or the write for the deletion (and
        # then finds no account): it never writes into an account being deleted.
        exclusive = bool(g.get(EXCLUSIVE_ACCOUNT))
        return get_for_write(db.session, User, user_id, exclusive=exclusive)
    # Usually the request's first statement: it need not open the transaction (an
    # authenticated read that needs nothing else then costs one round trip), and a read
    # request changes no account row: its caller is read detached.
    return get_by_driver(db.session(), User, user_id, attach=False)


READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_write_request() -> bool:
    """Whether a request is being served and may write (any method but a read's): its
    writes lock what they write on behalf of (the account here, a team in policies.teams)."""
    return has_request_context() and request.method not in READ_METHODS


# Set before the token check by a route that changes the account row itself in a way its
# other writes must wait for (its deletion): the token read takes the exclusive lock.
EXCLUSIVE_ACCOUNT = "exclusive_account"
REQUEST_CACHE = ("viewer", "token_checked", "token_user_key", "token_user")


def _account_key() -> Any:
    """The signed-in caller's account key in a write request, else None (no load)."""
    if not is_write_request():
        return None
    user = g.get("token_user")
    identity = sa_inspect(user).identity if user is not None else None
    return identity[0] if identity else None


def _check_account_before_first_write(session: Session) -> None:
    """SQLite: a write request's first write takes the database's write lock (BEGIN
    IMMEDIATE) and reads its account again under it, so a write never lands in an
    account deleted after the request's token was read (401 then). PostgreSQL locks the
    account at the token read instead (`get_for_write`)."""
    if _account_key() is None or g.get("account_checked_for_write"):
        return
    connection = session.connection()
    if connection.dialect.name != "sqlite":
        return
    # Not in a transaction: take the lock (the check runs under it, `_account_under_lock`).
    # In one already, the request took the lock itself (the check ran then), or a
    # savepoint began a deferred one, whose writes meet the foreign keys.
    begin_immediate(connection)


def _account_under_lock(connection: Any) -> None:
    """Once per write request, as SQLite's write lock is taken (here or by a lock the
    request takes before its first write): 401 when the account is gone."""
    key = _account_key()
    if key is None or g.get("account_checked_for_write"):
        return
    g.account_checked_for_write = True
    if connection.execute(select(User.id).where(User.id == key)).first() is None:
        gone = Unauthorized(
            "The bearer token's account no longer exists.", code=Code.ACCOUNT_DELETED
        )
        gone.headers["WWW-Authenticate"] = 'Bearer error="invalid_token"'
        raise gone


_checking = False


def check_accounts_before_writes() -> None:
    """Install `_check_account_before_first_write` (once per process: Session events)."""
    global _checking
    if _checking:
        return
    _checking = True
    on_write_lock(_account_under_lock)

    @event.listens_for(RoutingSession, "before_flush")
    def before_flush(session: Session, flush_context: Any, instances: Any) -> None:
        if session.new or session.dirty or session.deleted:
            _check_account_before_first_write(session)

    @event.listens_for(RoutingSession, "do_orm_execute")
    def before_statement(state: ORMExecuteState) -> None:
        if state.is_insert or state.is_update or state.is_delete:
            _check_account_before_first_write(state.session)


def answer_if_account_gone(error: Exception) -> Response | None:
    """401, as for a token whose account no longer exists, when a write failed on a
    reference (a foreign-key violation) because the caller's account was deleted while
    it ran (SQLite, where a write does not lock its account: `get_for_write`); None
    otherwise."""
    from sqlalchemy import inspect
    from sqlalchemy.exc import IntegrityError

    user = g.get("token_user") if has_request_context() else None
    identity = inspect(user).identity if user is not None else None
    if identity is None or not isinstance(error, IntegrityError):
        return None
    (user_id,) = identity  # the key, read without loading the failed transaction's row
    db.session.rollback()
    if db.session.get(User, user_id) is not None:
        return None
    return _bearer_problem(
        "The bearer token's account no longer exists.", code=Code.ACCOUNT_DELETED
    )


def forget_caller() -> None:
    """Start again without this request's caller (a request run again after a deadlock:
    its account is read, and locked, afresh)."""
    for name in REQUEST_CACHE:
        g.pop(name, None)


def register_jwt(app: Flask) -> None:
    check_accounts_before_writes()

    @app.before_request
    def forget_previous_caller() -> None:
        # The caller is cached on `g`, which lives as long as the app context. A request
        # owns its context in production, but shares one that is already pushed (tests,
        # scripts): start every request without the previous request's caller.
        for name in (*REQUEST_CACHE, EXCLUSIVE_ACCOUNT):
            g.pop(name, None)

    @jwt.decode_key_loader
    def verifying_key(header: dict[str, Any], payload: dict[str, Any]) -> str:
        return signing_key_for(header)

    @jwt.token_in_blocklist_loader
    def token_revoked(header: dict[str, Any], payload: dict[str, Any]) -> bool:
        user = _load_token_user(payload)
        return user is not None and payload.get("stamp") != user.security_stamp

    @jwt.user_lookup_loader
    def lookup_user(header: dict[str, Any], payload: dict[str, Any]) -> User | None:
        return _load_token_user(payload)

    @jwt.unauthorized_loader
    def missing_token(reason: str) -> Response:
        return _bearer_problem(
            "A bearer access token is required.", code=Code.AUTHENTICATION_REQUIRED, error=""
        )

    @jwt.invalid_token_loader
    def invalid_token(reason: str) -> Response:
        return _bearer_problem("The bearer token is invalid.", code=Code.INVALID_TOKEN)

    @jwt.expired_token_loader
    def expired_token(header: dict[str, Any], payload: dict[str, Any]) -> Response:
        return _bearer_problem("The bearer token has expired.", code=Code.TOKEN_EXPIRED)

    @jwt.revoked_token_loader
    def revoked_token(header: dict[str, Any], payload: dict[str, Any]) -> Response:
        return _bearer_problem("The bearer token has been revoked.", code=Code.TOKEN_REVOKED)

    @jwt.user_lookup_error_loader
    def unknown_user(header: dict[str, Any], payload: dict[str, Any]) -> Response:
        return _bearer_problem(
            "The bearer token's account no longer exists.", code=Code.ACCOUNT_DELETED
        )

    @jwt.token_verification_failed_loader
    def failed_verification(header: dict[str, Any], payload: dict[str, Any]) -> Response:
        return _bearer_problem("The bearer token is invalid.", code=Code.INVALID_TOKEN)

    @jwt.needs_fresh_token_loader
    def needs_fresh(header: dict[str, Any], payload: dict[str, Any]) -> Response:
        # No route asks for a fresh token; RFC 6750's invalid_token covers it.
        return _bearer_problem("A fresh sign-in is required.", code=Code.INVALID_TOKEN)
