"""Printable labels (docs/contract/trackables.md, Printable labels), on the
trackables blueprint: POST /api/trackables/labels answers a PDF sheet of labels.

The codes travel in the JSON body only, never in the URL (the access log writes the URL,
and no log writes a body); the answer is never cached.
"""

from __future__ import annotations

from typing import Any

from flask import Response, current_app
from marshmallow import ValidationError, fields, validate, validates_schema

from app.api.base import NOT_BLANK_PATTERN, Guid, ProblemSchema, Refuses, Regexp, RequestSchema
from app.api.base import Schema as BaseSchema
from app.api.trackables.cookies import guess_client, no_store
from app.api.trackables.routes import blp
from app.auth import current_viewer
from app.errors import PROBLEM_JSON
from app.extensions import db, limiter
from app.models.text import IN_NAMES
from app.services import trackables

PDF = "application/pdf"
LAYOUT_NAMES = list(trackables.LABEL_LAYOUTS)
MOST_PER_SHEET = max(layout.per_page for layout in trackables.LABEL_LAYOUTS.values())
TEXT_RULES = (
    f"At most {trackables.LABEL_TEXT_MAX_LENGTH} characters on one line, no control or "
    "direction characters; printed in Helvetica over up to three lines, the rest cut with "
    '"..."; characters Helvetica lacks (outside Windows-1252) print as `?`.'
)
NOT_BLANK = Regexp(NOT_BLANK_PATTERN, error="Must not be blank.")
ONE_LINE = Refuses(IN_NAMES, "Must not contain control or direction characters.")
LAYOUTS_TABLE = "; ".join(
    f"`{name}`: {layout.description}" for name, layout in trackables.LABEL_LAYOUTS.items()
)


def labels_rate_limit() -> str:
    return str(current_app.config["RATE_LIMIT_TRACKABLE_LABELS"])


class TrackableLabelItemSchema(RequestSchema):
    """One label: a trackable and the codes its create (or rotate) answer showed."""

    read_models = ()

    trackable_id = Guid(required=True)
    secret_code = fields.String(
        required=True,
        validate=[validate.Length(max=100), NOT_BLANK],
        metadata={"description": "Its short secret code, as the create answer showed it."},
    )
    qr_token = fields.String(
        validate=[validate.Length(min=1, max=256)],
        metadata={
            "description": "Its QR token: the last part of its `scanUrl`. Or send `scanUrl`."
        },
    )
    scan_url = fields.String(
        validate=[validate.Length(min=1, max=2048)],
        metadata={
            "description": "Its `scanUrl` (or `qrPayload`) as the create answer showed it. "
            "Or send `qrToken`. The label's QR code encodes the scan URL under this "
            "service's current base address."
        },
    )
    text = fields.String(
        validate=[validate.Length(max=trackables.LABEL_TEXT_MAX_LENGTH), ONE_LINE],
        metadata={
            "description": f"This label's line instead of the request's `text`. {TEXT_RULES}"
        },
    )

    @validates_schema
    def one_token(self, data: dict[str, Any], **kwargs: Any) -> None:
        if ("qr_token" in data) == ("scan_url" in data):
            raise ValidationError("Send exactly one of `qrToken` and `scanUrl`.", "qrToken")


class TrackableLabelsSchema(RequestSchema):
    """What to print, and on which sheet."""

    read_models = ()

    layout = fields.String(
        required=True,
        validate=validate.OneOf(LAYOUT_NAMES),
        metadata={"description": f"The label sheet. {LAYOUTS_TABLE}."},
    )
    paper = fields.String(
        validate=validate.OneOf(list(trackables.LABEL_PAPERS)),
        metadata={"description": "Optional: the paper of the `layout`'s sheet; another is 400."},
    )
    text = fields.String(
        validate=[validate.Length(max=trackables.LABEL_TEXT_MAX_LENGTH), ONE_LINE],
        metadata={"description": f"A line on every label (optional). {TEXT_RULES}"},
    )
    language = fields.String(
        load_default="en",
        validate=validate.OneOf(list(trackables.SITE_LANGUAGES)),
        metadata={
            "description": "The language of the captions saying which code is which "
            "(public code, secret code, the QR code): `en` (default) or `de`."
        },
    )
    skip_labels = fields.Integer(
        load_default=0,
        validate=validate.Range(min=0, max=MOST_PER_SHEET - 1),
        metadata={
            "description": "Positions of the first sheet already used (row by row from the "
            "top left): printing starts after them. Fewer than the sheet's labels."
        },
    )
    items = fields.List(
        fields.Nested(TrackableLabelItemSchema),
        required=True,
        validate=validate.Length(min=1, max=trackables.LABELS_MAX_ITEMS),
        metadata={
            "description": f"1 to {trackables.LABELS_MAX_ITEMS} labels, printed in this "
            "order; a trackable may appear more than once."
        },
    )

    @validates_schema
    def fits_the_sheet(self, data: dict[str, Any], **kwargs: Any) -> None:
        layout = trackables.LABEL_LAYOUTS.get(data.get("layout", ""))
        if layout is None:
            return
        paper = data.get("paper")
        if paper is not None and paper != layout.paper:
            raise ValidationError(f"{data['layout']} is a sheet of {layout.paper} paper.", "paper")
        if data.get("skip_labels", 0) >= layout.per_page:
            raise ValidationError(
                f"{data['layout']} has {layout.per_page} labels a sheet.", "skipLabels"
            )


class RefusedLabelItemSchema(BaseSchema):
    index = fields.Integer(metadata={"description": "The item's 0-based position in `items`."})
    code = fields.String(
        metadata={
            "description": "`trackable_not_found`, `trackable_request_rejected` (not its "
            "manager) or `trackable_access_code_invalid`."
        }
    )
    fields_ = fields.List(
        fields.String(),
        data_key="fields",
        metadata={"description": "With `trackable_access_code_invalid`: the wrong codes."},
    )


class TrackableLabelsProblemSchema(ProblemSchema):
    """A refused label request: every refused item, never a code."""

    refused_items = fields.List(fields.Nested(RefusedLabelItemSchema))


def refused(description: str) -> dict[str, Any]:
    return {
        "schema": TrackableLabelsProblemSchema,
        "content_type": PROBLEM_JSON,
        "description": description,
    }


PDF_DOC = {
    "responses": {
        "200": {
            "description": "The PDF sheets, one page per sheet (`Content-Disposition: "
            "attachment`, never cached).",
            "content": {PDF: {"schema": {"type": "string", "format": "binary"}}},
        }
    }
}


@blp.route("/trackables/labels", methods=["POST"])
@limiter.limit(labels_rate_limit)
@blp.auth()
@blp.arguments(TrackableLabelsSchema)
@blp.doc(**PDF_DOC)
@blp.alt_response(
    403,
    **refused(
        "An item is one the caller sees but does not manage (`trackable_request_rejected`), "
        "or a code is not its own (`trackable_access_code_invalid`, a guess spent).",
    ),
)
@blp.alt_response(
    404, **refused("An item names no trackable the caller can see (`trackable_not_found`).")
)
def print_trackable_labels(data: dict) -> Response:
    """Print labels for trackables

    Answers a PDF of label sheets: per item, the QR code of its scan URL, its public code,
    its secret code (each under a caption in `language` saying which it is) and an
    optional line of text. The service keeps no secret in plain text, so send each item's
    codes as its create (or rotate) answer showed them: the secret code, and the QR token
    or the scan URL. Every item is checked first: the
    caller must manage it (its owner, or a current admin of its team; the creator of an
    unactivated one) and both codes must be its own. Any refusal refuses the whole
    request, with `refusedItems` naming each refused item by index (never a code): 404
    when an item is not visible, else 403. A wrong code spends one guess of the caller's
    guess budget; over it, 429. Nothing of the request is stored. Rate limited per address
    (`RATE_LIMIT_TRACKABLE_LABELS`, 30 an hour by default).
    """
    no_store()
    config = current_app.config
    try:
        sheet = trackables.check_labels(
            current_viewer(),
            [trackables.LabelItem(**item) for item in data["items"]],
            layout=data["layout"],
            text=data.get("text"),
            skip=data["skip_labels"],
            language=data["language"],
            settings=trackables.CodeSettings.from_config(config),
            base_url=config["PUBLIC_BASE_URL"],
            guess_client=guess_client(),
            config=config,
        )
    except trackables.LabelItemsRefused as error:
        if error.counted_miss:
            db.session.commit()  # the spent guess stays counted
        raise
    # Nothing was written; end the transaction (and the guess budget's lock) before the
    # drawing, which takes a while for many labels.
    db.session.commit()
    return Response(
        sheet.render(),
        mimetype=PDF,
        headers={"Content-Disposition": 'attachment; filename="trackable-labels.pdf"'},
    )
