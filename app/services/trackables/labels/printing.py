"""Printable labels (docs/contract/trackables.md, Printable labels): a PDF sheet of labels for
trackables whose codes the caller holds.

No secret is kept for this: codes are stored only as keyed hashes, so the client sends each
item's secret code and QR token (or scan URL) as the create or rotate answer showed them,
and every item is checked before anything is drawn. A mismatch spends a guess of the
caller's guess budget, as a lookup miss does: labels are no free oracle for secrets. Any
refusal refuses the whole request (`LabelItemsRefused`), naming each refused item by index,
never a code. Nothing of the request is stored or logged; the PDF is drawn in memory
(label_sheets) after the request's transaction ends.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from flask_babel import force_locale
from flask_babel import gettext as _
from sqlalchemy import select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import TrackableError
from app.extensions import db
from app.models.trackable import CodeKind, Trackable, TrackableCode
from app.policies import trackables as policy
from app.services.trackables.codes.formats import BYO_SHAPE, CodeSettings, matching_form
from app.services.trackables.codes.guesses import GuessClient, check_budget, count_miss
from app.services.trackables.codes.issuing import scan_url
from app.services.trackables.labels.label_sheets import (
    LAYOUTS,
    Captions,
    LabelContent,
    SheetLayout,
    render_sheets,
)

LABELS_MAX_ITEMS = 200  # two full groups in one request
LABEL_TEXT_MAX_LENGTH = 100  # characters; what does not fit on a label ends with "..."
NOT_FOUND, NOT_MANAGED, CODE_INVALID = (
    Code.TRACKABLE_NOT_FOUND,
    Code.TRACKABLE_REQUEST_REJECTED,
    Code.TRACKABLE_ACCESS_CODE_INVALID,
)
# Which refusal decides the answer's status and code when items are refused differently:
# what the caller may not see first (404, as anywhere), then what they may not do.
SEVERITY = (NOT_FOUND, NOT_MANAGED, CODE_INVALID)
REASONS = {
    NOT_FOUND: "no trackable you can see has this id",
    NOT_MANAGED: "only the trackable's owner or a current admin of its team prints its labels",
    CODE_INVALID: "the code does not belong to this trackable",
}


@dataclass(frozen=True)
class LabelItem:
    """One label asked for: the trackable and the codes the client holds."""

    trackable_id: uuid.UUID
    secret_code: str
    qr_token: str | None = None
    scan_url: str | None = None
    text: str | None = None  # this label's line; None: the request's


@dataclass(frozen=True)
class RefusedItem:
    index: int
    code: Code
    fields: tuple[str, ...] = ()


class LabelItemsRefused(TrackableError):
    """The whole request is refused; `refusedItems` names every refused item (0-based)."""

    def __init__(self, refused: Sequence[RefusedItem], *, counted_miss: bool) -> None:
        code = min((item.code for item in refused), key=SEVERITY.index)
        super().__init__(
            code,
            f"{_refusals(refused)}. Nothing was printed.",
            status=404 if code == NOT_FOUND else 403,
        )
        self.counted_miss = counted_miss
        self.extra = {
            "refusedItems": [
                {"index": item.index, "code": item.code, "fields": list(item.fields)}
                for item in refused
            ]
        }


def _refusals(refused: Sequence[RefusedItem]) -> str:
    """The refused items by reason, the worst first: `Items 0, 3: ...; item 5: ...`."""
    parts = []
    for code in SEVERITY:
        indexes = [str(item.index) for item in refused if item.code == code]
        if indexes:
            noun = "item" if len(indexes) == 1 else "items"
            parts.append(f"{noun} {', '.join(indexes)}: {REASONS[code]}")
    text = "; ".join(parts)
    return text[0].upper() + text[1:]


@dataclass(frozen=True)
class LabelSheet:
    """Checked labels, ready to draw (their codes in memory only)."""

    layout: SheetLayout
    labels: list[LabelContent]
    skip: int = 0

    def render(self) -> bytes:
        """The PDF (slow for many labels: call it outside the request's transaction)."""
        return render_sheets(self.layout, self.labels, self.skip)


def token_of(url: str) -> str | None:
    """The QR token in a scan URL (`.../trackable/{token}`), whatever its host; None when
    the URL has none."""
    try:
        path = urlsplit(url.strip()).path
    except ValueError:
        return None
    _head, found, token = path.rpartition("/trackable/")
    return token if found and token and "/" not in token else None


# The caller may see the trackable (else 404 trackable_not_found) and manage it (else 403
# trackable_request_rejected): policies.trackables.label_refusal. The codes are compared with the
# stored hashes in constant time (codes.matching_form), else 403 trackable_access_code_invalid; a
# caller over the guess budget is refused (429) before any code is compared. The status is the first
# of 404, then 403 that any item has.
def check_labels(
    viewer: Viewer,
    items: Sequence[LabelItem],
    *,
    layout: str,
    settings: CodeSettings,
    base_url: str,
    guess_client: GuessClient,
    config: Mapping[str, Any],
    text: str | None = None,
    skip: int = 0,
    language: str = "en",
) -> LabelSheet:
    """Check every item (see the module docstring) and return the sheet to draw, its
    captions in `language`, or raise LabelItemsRefused (its counted miss is in the
    session: the caller commits it)."""
    check_budget(guess_client, config)
    ids = {item.trackable_id for item in items}
    found = {t.id: t for t in db.session.scalars(select(Trackable).where(Trackable.id.in_(ids)))}
    stored = _stored_hashes(ids)
    refused: list[RefusedItem] = []
    labels: list[LabelContent] = []
    captions = label_captions(language)
    for index, item in enumerate(items):
        trackable = found.get(item.trackable_id)
        refusal = policy.label_refusal(viewer, trackable)
        if refusal is not None or trackable is None:
            refused.append(RefusedItem(index, refusal or NOT_FOUND))
            continue
        secret, token, wrong = _checked_codes(settings, trackable, item, stored)
        if wrong:
            refused.append(RefusedItem(index, CODE_INVALID, wrong))
        elif secret is not None and token is not None:
            line = item.text if item.text is not None else text
            labels.append(
                LabelContent(
                    scan_url(base_url, token), trackable.public_code, secret, line or "", captions
                )
            )
    if refused:
        counted = any(item.code == CODE_INVALID for item in refused)
        if counted:
            count_miss(guess_client, config)
        raise LabelItemsRefused(refused, counted_miss=counted)
    return LabelSheet(LAYOUTS[layout], labels, skip)


def label_captions(language: str) -> Captions:
    """What each code on a label is, in `language` (the website's catalogues)."""
    with force_locale(language):
        return Captions(_("Public code"), _("Secret code"), _("Scan the QR code"))


def _stored_hashes(ids: set[uuid.UUID]) -> dict[tuple[uuid.UUID, CodeKind], list[str]]:
    """The stored secret and QR hashes of these trackables, by trackable and kind."""
    rows = db.session.execute(
        select(TrackableCode.trackable_id, TrackableCode.kind, TrackableCode.code_hash).where(
            TrackableCode.trackable_id.in_(ids),
            TrackableCode.kind.in_((CodeKind.SECRET, CodeKind.QR)),
        )
    )
    stored: dict[tuple[uuid.UUID, CodeKind], list[str]] = {}
    for trackable_id, kind, code_hash in rows:
        stored.setdefault((trackable_id, kind), []).append(code_hash)
    return stored


def _checked_codes(
    settings: CodeSettings,
    trackable: Trackable,
    item: LabelItem,
    stored: Mapping[tuple[uuid.UUID, CodeKind], list[str]],
) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(the secret as printed, the QR token, the fields whose code is not this
    trackable's). A system secret is printed in its normal form (`ln 4k7q-2mzx` as
    `LN4K7Q2MZX`), one the creator brought as sent."""
    secret_form = matching_form(
        settings, item.secret_code, stored.get((trackable.id, CodeKind.SECRET), [])
    )
    token_field = "qrToken" if item.qr_token is not None else "scanUrl"
    token = item.qr_token if item.qr_token is not None else token_of(item.scan_url or "")
    token_ok = token is not None and (
        matching_form(settings, token, stored.get((trackable.id, CodeKind.QR), []), exact=True)
        is not None
    )
    wrong = tuple(
        name
        for name, ok in (("secretCode", secret_form is not None), (token_field, token_ok))
        if not ok
    )
    if secret_form is None:
        return None, token, wrong
    sent = item.secret_code.strip()
    own = trackable.has_custom_secret and BYO_SHAPE.fullmatch(sent)
    return (sent if own else secret_form), token, wrong
