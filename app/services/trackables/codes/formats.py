"""Trackable codes (contract: Trackable, code formats; decisions: Trackable codes).

Three kinds of code reach a trackable: its public code (`LN-` + 6), its short secret
(`LN` + 8, `GT` + 8 on a sister deployment, or one the creator brought) and its long
scan-only QR token. Each is stored once in `trackable_codes` as the HMAC (key:
TRACKABLE_CODE_KEY) of its normalised form, so one unique key refuses any collision between
kinds, and a database leak reveals no secret. The keys form a chain, so the code key can be
replaced without voiding a printed code (`chain_hashes`, code_keys.py). Typed codes are
normalised before hashing, and lookup tries every form a typed text can be, so it never
assumes a length.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

ALPHABET = "0123456789ABCDEFGHJKMNPQRTVWXYZ"
TYPO_MAP = str.maketrans({"O": "0", "I": "1", "L": "1", "S": "5", "U": "V"})
QR_ALPHABET = string.ascii_letters + string.digits + "-_"
BYO_SHAPE = re.compile(r"^[A-Za-z0-9_-]{6,64}$")
BYO_SEPARATORS = str.maketrans("", "", "-_")


@dataclass(frozen=True)
class CodeSettings:
    """The code settings of one deployment (config.py documents each)."""

    keys: tuple[bytes, ...]  # the chain, oldest first; the last is TRACKABLE_CODE_KEY
    public_prefix: str = "LN"
    secret_prefix: str = "LN"  # noqa: S105 - a code prefix, not a secret
    sister_prefix: str = "GT"
    foreign_prefix: str = "TB"
    public_length: int = 6
    secret_length: int = 8
    qr_length: int = 100

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> CodeSettings:
        previous = config.get("TRACKABLE_CODE_KEYS_PREVIOUS") or ()
        return cls(
            keys=tuple(str(key).encode() for key in [*previous, config["TRACKABLE_CODE_KEY"]]),
            public_prefix=config["TRACKABLE_PUBLIC_PREFIX"].upper(),
            secret_prefix=config["TRACKABLE_SECRET_PREFIX"].upper(),
            sister_prefix=config["TRACKABLE_SISTER_PREFIX"].upper(),
            foreign_prefix=config["TRACKABLE_FOREIGN_PREFIX"].upper(),
            public_length=config["TRACKABLE_PUBLIC_CODE_LENGTH"],
            secret_length=config["TRACKABLE_SECRET_CODE_LENGTH"],
            qr_length=config["TRACKABLE_QR_TOKEN_LENGTH"],
        )

    @property
    def generation(self) -> int:
        """The generation new codes are stored at (0 until the key is first replaced)."""
        return len(self.keys) - 1

    @property
    def reserved_prefixes(self) -> tuple[str, ...]:
        """What a bring-your-own secret must not start with (any case)."""
        return tuple(
            dict.fromkeys(
                (self.public_prefix, self.secret_prefix, self.sister_prefix, self.foreign_prefix)
            )
        )


def _body(length: int) -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def new_public_code(settings: CodeSettings) -> str:
    return f"{settings.public_prefix}-{_body(settings.public_length)}"


def new_secret_code(settings: CodeSettings) -> str:
    return f"{settings.secret_prefix}{_body(settings.secret_length)}"


def new_qr_token(settings: CodeSettings) -> str:
    return "".join(secrets.choice(QR_ALPHABET) for _ in range(settings.qr_length))


def _hmac(key: bytes, message: str) -> str:
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


# The chain is TRACKABLE_CODE_KEYS_PREVIOUS, oldest first, then TRACKABLE_CODE_KEY; a code's hash at
# generation g is the HMAC of its hash at g-1 under key g. flask trackables rotate-code-key wraps
# stored hashes forward; lookups try every generation, so a row not yet wrapped is found too. An old
# key alone no longer verifies a guess.
def chain_hashes(settings: CodeSettings, normalised: str) -> list[str]:
    """A normalised code's hash at every generation, the current one first: HMAC-SHA256
    (hex) under the first key, then each hash HMAC'd under the next key."""
    found = [_hmac(settings.keys[0], normalised)]
    for key in settings.keys[1:]:
        found.append(_hmac(key, found[-1]))
    return found[::-1]


def code_hash(settings: CodeSettings, normalised: str) -> str:
    """The stored key of a normalised code at the current generation."""
    return chain_hashes(settings, normalised)[0]


def wrap(settings: CodeSettings, stored: str, generation: int) -> str:
    """A hash stored at `generation`, brought to the current one."""
    for key in settings.keys[generation + 1 :]:
        stored = _hmac(key, stored)
    return stored


def key_fingerprint(key: bytes) -> str:
    """What the database keeps of a code key: enough to recognise it, nothing to use."""
    return _hmac(key, "location-notes trackable code key fingerprint")


@cache
def common_secrets() -> frozenset[str]:
    """The shipped list of secrets too common to bring, lower-cased."""
    text = resources.files("app.data").joinpath("common_secrets.txt").read_text("utf-8")
    return frozenset(
        line.strip().lower() for line in text.splitlines() if line and not line.startswith("#")
    )


def is_common_secret(code: str) -> bool:
    lowered = code.lower()
    common = common_secrets()
    return lowered in common or lowered.translate(BYO_SEPARATORS) in common


# A bring-your-own secret has 6-64 letters, digits, - or _, and is not one of the commonest
# passwords, words, names or sequences (app/data/common_secrets.txt, loaded once; compared ignoring
# case, and again without its - and _).
def byo_problem(settings: CodeSettings, code: str) -> str | None:
    """Why a bring-your-own secret is refused by its shape, or None (uniqueness is the
    database's to say, and costs a guess: see issuing)."""
    if not BYO_SHAPE.fullmatch(code):
        return "A secret code has 6 to 64 letters, digits, '-' or '_'."
    upper = code.upper()
    for prefix in settings.reserved_prefixes:
        if upper.startswith(prefix):
            return f"A secret code of your own must not start with {prefix}."
    if is_common_secret(code):
        return "This secret code is too common to keep anything secret; choose another."
    return None


def normalise_byo(code: str) -> str:
    return code.strip().upper()


# What a finder types between the characters of a system code's body: spaces (any white
# space) and hyphens, including the dashes phone keyboards put in for `-`.
SEPARATORS = re.compile(r"[\s\-\u2010-\u2015\u2212]+")


def _system_body(text: str, prefix: str) -> str | None:
    """The body of `text` (trimmed, upper-cased) as a system code of `prefix`: separators
    dropped, the typo map applied; None when it has no such prefix or no body."""
    if not text.startswith(prefix):
        return None
    body = SEPARATORS.sub("", text[len(prefix) :])
    return body.translate(TYPO_MAP) or None


# Trimmed and upper-cased; in the body of a system code (after its literal prefix) spaces and
# hyphens dropped and O->0, I->1, L->1, S->5, U->V mapped (the alphabet has none of those letters),
# so "ln abc-123" is "LN-ABC123". Bring-your-own secrets, which may hold - and _, are compared as
# typed but ignoring case, without that mapping; QR tokens exactly.
def typed_forms(settings: CodeSettings, code: str) -> list[str]:
    """Every normalised form a typed or scanned code may be stored under. When a text
    could be both a public code and a system secret (equal prefixes), the form its shape
    suggests comes first: a separator right after the prefix reads as a public code."""
    raw = code.strip()
    upper = raw.upper()
    public_body = _system_body(upper, settings.public_prefix)
    secret_body = _system_body(upper, settings.secret_prefix)
    public = f"{settings.public_prefix}-{public_body}" if public_body else None
    secret = f"{settings.secret_prefix}{secret_body}" if secret_body else None
    typed_as_secret = secret is not None and not SEPARATORS.match(
        upper[len(settings.secret_prefix) :]
    )
    forms: list[str | None] = [secret, public] if typed_as_secret else [public, secret]
    forms += [upper, raw]  # a bring-your-own secret (any case), a QR token (exactly)
    return list(dict.fromkeys(form for form in forms if form))


def typed_hashes(settings: CodeSettings, code: str) -> list[str]:
    """Every stored hash a typed code may have: each form at each generation, in the
    forms' order (a row not yet wrapped to the current key is found too)."""
    return [found for form in typed_forms(settings, code) for found in chain_hashes(settings, form)]


def matching_form(
    settings: CodeSettings, code: str, stored: Iterable[str], *, exact: bool = False
) -> str | None:
    """The normalised form of a typed `code` (or `code` itself when `exact`, as QR tokens
    are compared) whose hash, at any key generation, is one of the `stored` hashes; None
    when none is. Every candidate hash is compared with every stored one, in constant
    time each (hmac.compare_digest), whatever matched first."""
    known = list(stored)
    forms = [code] if exact else typed_forms(settings, code)
    found = None
    for form in forms:
        hit = False
        for candidate in chain_hashes(settings, form):
            for stored_hash in known:
                hit |= hmac.compare_digest(candidate, stored_hash)
        if hit and found is None:
            found = form
    return found


def foreign_kind(settings: CodeSettings, code: str) -> str | None:
    """`foreign` for another system's code (TB...), `sister` for a sister deployment's
    secret (GT... here on LN), else None: a miss for these carries a help link."""
    upper = code.strip().upper()
    if upper.startswith(settings.foreign_prefix):
        return "foreign"
    if settings.sister_prefix != settings.secret_prefix and upper.startswith(
        settings.sister_prefix
    ):
        return "sister"
    return None


def hashes(settings: CodeSettings, codes: Iterable[str]) -> list[str]:
    return [code_hash(settings, code) for code in codes]
