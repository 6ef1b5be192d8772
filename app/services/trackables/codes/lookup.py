"""Code lookup (contract: Trackables: lookup and active sessions; decisions: Trackable codes,
Access sessions for secret codes).

`resolve` finds the trackable a typed or scanned code names (normalised as formats.py says;
it never assumes a length). `lookup_code` is one lookup (the API's and `/trackable/{code}`):
a public code is a hit only when the caller may see the trackable (an unactivated one's
miss says it is not activated yet); a secret or QR token always hits and opens the client's
access session. A miss counts against the client's guess budget. The secret itself never
leaves this module: results carry the trackable and how it matched, never the code.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from werkzeug.datastructures import LanguageAccept

from app.auth import Viewer
from app.models.trackable import CodeKind, Trackable
from app.policies import trackables as policy
from app.services.trackables import queries
from app.services.trackables.codes import formats
from app.services.trackables.codes.formats import CodeSettings
from app.services.trackables.codes.guesses import GuessClient, check_budget, count_miss
from app.services.trackables.codes.sessions import client_key, open_session, record_unlock

# The languages the website renders trackable pages in, the first being the default.
SITE_LANGUAGES = ("en", "de")

NOT_FOUND = "No trackable matches this code. Check it and try again."
FOREIGN = "This looks like a code of another tracking system; it is not a code of this service."
SISTER = "This looks like a secret code of a sister service; enter it on that service."
NOT_ACTIVATED = (
    "This trackable has not been activated yet. Whoever holds its secret code can activate "
    "it: sign in and enter the secret code."
)


@dataclass(frozen=True)
class LookupResult:
    """What a lookup found; never the code itself."""

    trackable_id: uuid.UUID | None = None
    kind: CodeKind | None = None
    redirect_url: str | None = None
    error: str | None = None
    help_url: str | None = None
    # Why a miss missed: "not_found", "not_activated" (the public code of an unactivated
    # trackable the caller may not see), or "foreign" / "sister" for another service's code.
    reason: str | None = None

    @property
    def found(self) -> bool:
        return self.trackable_id is not None

    @property
    def is_public_code_match(self) -> bool:
        return self.kind is CodeKind.PUBLIC

    @property
    def uses_secret_access(self) -> bool:
        return self.kind in (CodeKind.SECRET, CodeKind.QR)


def _match(settings: CodeSettings, code: str) -> queries.CodeMatch | None:
    """The code `code` names and its trackable (see `resolve`), or None: one statement,
    and a secret match needs no instance at all."""
    hashes = formats.typed_hashes(settings, code)
    if not hashes:
        return None
    rows = queries.codes_matching(hashes)
    if not rows:
        return None
    return min(rows, key=lambda row: hashes.index(row.code_hash))


def resolve(settings: CodeSettings, code: str) -> tuple[Trackable, CodeKind] | None:
    """The trackable `code` names and the kind of code it is, or None. When forms of one
    text match several codes (vanishingly unlikely), the system form its shape suggests
    wins (public or secret), then the other, the bring-your-own secret and the QR token
    (formats.typed_forms' order)."""
    row = _match(settings, code)
    if row is None:
        return None
    return row.trackable(), row.kind


def find_by_public_code(viewer: Viewer, code: str, settings: CodeSettings) -> Trackable:
    """The trackable whose public code this is (typed forms normalised) when the viewer
    may see it (the public page); else 404 `trackable_not_found`. A secret code or QR
    token is no public code here: it finds nothing, as an unknown code does."""
    match = resolve(settings, code)
    if match is None or match[1] is not CodeKind.PUBLIC or not policy.can_view(viewer, match[0]):
        raise policy.not_found()
    return match[0]


def site_language(accepted: LanguageAccept) -> str:
    """The page language: the best of SITE_LANGUAGES the Accept-Language header accepts
    (`de-AT` counts for `de`, at its own quality), else the first. Accounts keep no
    language yet."""
    for tag, _quality in accepted:  # best first
        primary = tag.split("-")[0].split("_")[0].lower()
        if primary in SITE_LANGUAGES:
            return primary
    return SITE_LANGUAGES[0]


def landing_path(lang: str, kind: CodeKind, trackable_id: uuid.UUID, public_code: str) -> str:
    """Where the website shows a match: the public page for a public code, the active
    landing for secret access (contract: website routes)."""
    if kind is CodeKind.PUBLIC:
        return f"/{lang}/trackables/{quote(public_code, safe='')}"
    return f"/{lang}/trackables/active/{trackable_id}"


# An invisible trackable's public code misses like an unknown code, except an unactivated one's:
# its miss says so (docs/contract/trackables.md, the exception to "hide, don't forbid") and still
# counts. A secret hit by a signed-in caller also stores the unlock on the account. A client over
# its budget is refused (429) before its code is even resolved.
def lookup_code(
    viewer: Viewer,
    code: str,
    *,
    lang: str,
    client_id: str,
    guess_client: GuessClient,
    config: Mapping[str, Any],
) -> LookupResult:
    """One lookup of a typed or scanned code (see the module docstring). `client_id` is
    the access-session client (from its cookie, or new: the caller sets the cookie when
    the result `uses_secret_access`); `guess_client` the guess-budget key of its address.
    Raises GuessBudgetExceeded (429) when the client is over its budget."""
    check_budget(guess_client, config)
    settings = CodeSettings.from_config(config)
    row = _match(settings, code)
    if row is not None:
        kind, trackable_id, public_code = row.kind, row.trackable_id, row.public_code
        landing = landing_path(lang, kind, trackable_id, public_code)
        if kind is not CodeKind.PUBLIC:
            open_session(client_key(config, client_id), trackable_id)
            if viewer.user is not None:
                record_unlock(viewer.user, trackable_id)
            return LookupResult(trackable_id, kind, landing)
        # A public code is no credential: it finds only what the caller may see.
        trackable = row.trackable()
        if policy.can_view(viewer, trackable):
            return LookupResult(trackable_id, kind, landing)
        if not trackable.is_activated:
            count_miss(guess_client, config)
            return LookupResult(error=NOT_ACTIVATED, reason="not_activated")
    count_miss(guess_client, config)
    return _miss(settings, code, config)


def _miss(settings: CodeSettings, code: str, config: Mapping[str, Any]) -> LookupResult:
    other = formats.foreign_kind(settings, code)
    if other == "foreign":
        return LookupResult(
            error=FOREIGN, help_url=config["TRACKABLE_FOREIGN_HELP_URL"], reason="foreign"
        )
    if other == "sister":
        return LookupResult(
            error=SISTER, help_url=config["TRACKABLE_FOREIGN_HELP_URL"], reason="sister"
        )
    return LookupResult(error=NOT_FOUND, reason="not_found")
