"""Giving a trackable its codes (decisions: Trackable codes): a public code, a short secret
(generated, or brought by the creator) and a QR token, each stored as the keyed hash of its
normalised form in `trackable_codes`.

Uniqueness is the database's: every code is inserted under a savepoint, and a generated
code that collides with any existing code (even one a concurrent request inserted a moment
ago) is drawn again. A brought secret that collides is refused. The plain secret and token
leave this module once, in the create (or rotate) response.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import exc, insert, select

from app.errors import ValidationFailed
from app.extensions import db
from app.models.base import new_id
from app.models.trackable import CodeKind, Trackable, TrackableCode
from app.services.trackables.codes.formats import (
    CodeSettings,
    byo_problem,
    chain_hashes,
    code_hash,
    new_public_code,
    new_qr_token,
    new_secret_code,
    normalise_byo,
)
from app.services.trackables.codes.guesses import GuessClient, check_budget, count_miss

ATTEMPTS = 8  # a collision of 31^6 codes is rare; eight in a row means something is wrong
SECRET_TAKEN = "This secret code is already in use; choose another."  # noqa: S105 - a message


class SecretCodeTaken(ValidationFailed):
    """400 on `secretCode`: the bring-your-own secret is in use. Its miss is counted in the
    request's transaction, which holds nothing else yet: the route commits it before the
    refusal goes out."""

    def __init__(self) -> None:
        super().__init__({"secretCode": [SECRET_TAKEN]})


# One some trackable already uses is refused (400 SecretCodeTaken), and that refusal spends a guess
# of the caller's guess budget as a lookup miss does (over the budget: 429, taken or free), so
# secrets cannot be tested for free. One that collides only at its insert (a concurrent request took
# it a moment ago) is refused too.
def check_own_secret(
    settings: CodeSettings, secret_code: str, guess_client: GuessClient, config: Mapping[str, Any]
) -> None:
    """Before anything is written: 429 when the caller is over its guess budget (whether
    the secret is taken or not, or the refusal would answer), else SecretCodeTaken, with a
    miss counted, when any code (a secret, or the trackable's own current one) is it."""
    check_budget(guess_client, config)
    taken = select(TrackableCode.code_hash).where(  # under every key of the chain
        TrackableCode.code_hash.in_(chain_hashes(settings, normalise_byo(secret_code)))
    )
    if db.session.scalar(taken) is not None:
        count_miss(guess_client, config)
        raise SecretCodeTaken


@dataclass(frozen=True)
class IssuedCodes:
    """What the create response shows once: never stored in plain text except
    `public_code`."""

    public_code: str
    secret_code: str
    qr_token: str

    def scan_url(self, base_url: str) -> str:
        return scan_url(base_url, self.qr_token)


def scan_url(base_url: str, qr_token: str) -> str:
    """What a trackable's QR code encodes (decisions: Trackable codes): the website's entry
    route with the QR token, `{base_url}/trackable/{token}`."""
    return f"{base_url.rstrip('/')}/trackable/{qr_token}"


def _taken_under_older_keys(settings: CodeSettings, normalised: Sequence[str]) -> bool:
    """Whether any of these codes is stored at an older key generation (a row the code
    key rotation has not wrapped yet): the primary key only refuses a twin at the current
    generation. Nothing to ask while the chain has one key."""
    if settings.generation == 0:
        return False
    older = [found for code in normalised for found in chain_hashes(settings, code)[1:]]
    taken = select(TrackableCode.code_hash).where(TrackableCode.code_hash.in_(older)).limit(1)
    return db.session.scalar(taken) is not None


def _insert_code(
    trackable: Trackable, kind: CodeKind, normalised: str, settings: CodeSettings
) -> bool:
    """Store one code under a savepoint; False when it is taken (under any key)."""
    if _taken_under_older_keys(settings, [normalised]):
        return False
    try:
        with db.session.begin_nested():
            db.session.add(
                TrackableCode(
                    code_hash=code_hash(settings, normalised),
                    trackable_id=trackable.id,
                    kind=kind,
                    key_generation=settings.generation,
                )
            )
    except exc.IntegrityError:
        return False
    return True


def _insert_generated(
    trackable: Trackable, kind: CodeKind, draw: Callable[[], str], settings: CodeSettings
) -> str:
    for _ in range(ATTEMPTS):
        code = draw()
        if _insert_code(trackable, kind, code, settings):
            return code
    raise RuntimeError(f"no free {kind} code after {ATTEMPTS} draws")


def add_with_codes(
    trackable: Trackable, settings: CodeSettings, *, secret_code: str | None = None
) -> IssuedCodes:
    """Insert a new trackable with a fresh public code (drawn again on a collision with
    any code or public code), then its secret and QR token. `secret_code` empty or None
    means a generated secret; otherwise it is checked as a bring-your-own code (400 on
    `secretCode`)."""
    custom = (secret_code or "").strip()
    if custom:
        problem = byo_problem(settings, custom)
        if problem:
            raise ValidationFailed({"secretCode": [problem]})
    for _ in range(ATTEMPTS):
        trackable.public_code = new_public_code(settings)
        try:
            with db.session.begin_nested():  # trackables.public_code is unique
                db.session.add(trackable)
        except exc.IntegrityError:
            continue  # the savepoint's rollback took the pending row back out
        break
    else:
        raise RuntimeError(f"no free public code after {ATTEMPTS} draws")
    # Its hash joins the one key space of every code (a public code's shape, `LN-` and a
    # body, is no secret's or token's, so this refuses only a twin public code).
    if not _insert_code(trackable, CodeKind.PUBLIC, trackable.public_code, settings):
        raise RuntimeError(f"public code {trackable.public_code} is taken in trackable_codes")
    if custom:
        if not _insert_code(trackable, CodeKind.SECRET, normalise_byo(custom), settings):
            raise ValidationFailed({"secretCode": [SECRET_TAKEN]})
        trackable.has_custom_secret = True
        secret = custom
    else:
        secret = _insert_generated(
            trackable, CodeKind.SECRET, lambda: new_secret_code(settings), settings
        )
    token = _insert_generated(trackable, CodeKind.QR, lambda: new_qr_token(settings), settings)
    db.session.flush()
    return IssuedCodes(trackable.public_code, secret, token)


# The items of a group go in two multi-row statements under one savepoint; in the rare case anything
# collides, that savepoint goes back and each item is added on its own.
def add_many_with_codes(
    trackables: Sequence[Trackable], settings: CodeSettings
) -> list[IssuedCodes]:
    """Insert new trackables with generated codes, all at once (see the module docstring);
    the codes come back in the order of `trackables`."""
    issued = []
    for trackable in trackables:
        trackable.id = trackable.id or new_id()  # the code rows name it before the flush
        trackable.public_code = new_public_code(settings)
        issued.append(
            IssuedCodes(trackable.public_code, new_secret_code(settings), new_qr_token(settings))
        )
    plain = [
        (trackable, kind, code)
        for trackable, codes in zip(trackables, issued, strict=True)
        for kind, code in (
            (CodeKind.PUBLIC, codes.public_code),
            (CodeKind.SECRET, codes.secret_code),
            (CodeKind.QR, codes.qr_token),
        )
    ]
    if _taken_under_older_keys(settings, [code for _t, _k, code in plain]):
        return [add_with_codes(trackable, settings) for trackable in trackables]
    rows = [
        {
            "code_hash": code_hash(settings, code),
            "trackable_id": trackable.id,
            "kind": kind,
            "key_generation": settings.generation,
        }
        for trackable, kind, code in plain
    ]
    try:
        with db.session.begin_nested():
            db.session.add_all(trackables)
            db.session.flush()
            db.session.execute(insert(TrackableCode), rows)
    except exc.IntegrityError:
        # The savepoint's rollback took the pending trackables back out.
        return [add_with_codes(trackable, settings) for trackable in trackables]
    return issued


def replace_secrets(
    trackable: Trackable, settings: CodeSettings, *, secret_code: str | None = None
) -> IssuedCodes:
    """New secret and QR token for a trackable whose old ones leaked: the old ones stop
    matching at once (their rows go in the same transaction). A bring-your-own secret
    follows the rules of creation and has passed `check_own_secret`, for which the
    trackable's own current secret counts as in use, or "rotating" to it would leave the
    leaked code working."""
    custom = (secret_code or "").strip()
    if custom:
        problem = byo_problem(settings, custom)
        if problem:
            raise ValidationFailed({"secretCode": [problem]})
    db.session.query(TrackableCode).filter(
        TrackableCode.trackable_id == trackable.id, TrackableCode.kind != CodeKind.PUBLIC
    ).delete(synchronize_session=False)
    db.session.flush()
    if custom:
        if not _insert_code(trackable, CodeKind.SECRET, normalise_byo(custom), settings):
            raise ValidationFailed({"secretCode": [SECRET_TAKEN]})
        secret = custom
    else:
        secret = _insert_generated(
            trackable, CodeKind.SECRET, lambda: new_secret_code(settings), settings
        )
    trackable.has_custom_secret = bool(custom)
    token = _insert_generated(trackable, CodeKind.QR, lambda: new_qr_token(settings), settings)
    db.session.flush()
    return IssuedCodes(trackable.public_code, secret, token)
