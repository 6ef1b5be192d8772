"""The webhooks' wire shapes: a subscription (with its secret once, when made), the
bodies that create and change one, a delivery with its tries, and the payloads POSTed to
subscribers (the document's `webhooks` section)."""

from __future__ import annotations

from marshmallow import fields, validate

from app.api.base import Guid, RequestSchema, Schema, UtcDateTime
from app.models.webhook import WEBHOOK_URL_MAX_LENGTH, DeliveryState
from app.services.events import EventType

EVENT_TYPE_NAMES = [kind.value for kind in EventType]
EVENT_TYPES_MAX = len(EVENT_TYPE_NAMES)

EVENT_TYPES_DESCRIPTION = (
    "The event types it receives (docs/contract/events.md, Events and notifications). "
    "Empty: every type, including types added later."
)


def _event_types(**kwargs: object) -> fields.List:
    return fields.List(
        fields.String(validate=validate.OneOf(EVENT_TYPE_NAMES)),
        validate=validate.Length(max=EVENT_TYPES_MAX),
        metadata={"description": EVENT_TYPES_DESCRIPTION},
        **kwargs,  # type: ignore[arg-type]
    )


class WebhookSchema(Schema):
    webhook_id = Guid(required=True)
    url = fields.String(required=True, metadata={"format": "uri"})
    event_types = _event_types(required=True)
    is_enabled = fields.Boolean(required=True)
    team_id = Guid(
        required=True,
        allow_none=True,
        metadata={"description": "The team it delivers for; null for a personal webhook."},
    )
    created_utc = UtcDateTime(required=True)
    updated_utc = UtcDateTime(required=True)
    failing_since_utc = UtcDateTime(
        required=True,
        allow_none=True,
        metadata={"description": "Since when every try has failed; null after a success."},
    )
    disabled_reason = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "Why it is switched off: `owner` (by a PATCH), `failing` (its "
            "endpoint failed for three days) or `unreachable` (three tries in a row found "
            "no public address: the address is not a public one, or the name does not "
            "resolve); its owner is mailed of the last two. Null when on.",
            "enum": ["owner", "failing", "unreachable", None],
        },
    )
    paused_until_utc = UtcDateTime(
        required=True,
        allow_none=True,
        metadata={
            "description": "Its endpoint timed out three tries in a row: no try is made "
            "until then; then one, and a pause twice as long (1 minute to 1 hour) if that "
            "times out too. Null when tries go ahead."
        },
    )
    previous_secret_expires_utc = UtcDateTime(
        required=True,
        allow_none=True,
        metadata={"description": "During a rotation: until when the previous secret signs too."},
    )


class WebhookCreatedSchema(WebhookSchema):
    secret = fields.String(
        required=True,
        metadata={
            "description": "The signing secret (`whsec_` and base64), shown this once: "
            "deliveries are signed with it as Standard Webhooks 1.0 says.",
            "pattern": "^whsec_[A-Za-z0-9+/=]+$",
        },
    )


class WebhookCreateSchema(RequestSchema):
    read_models = (WebhookSchema,)

    url = fields.String(
        required=True,
        validate=validate.Length(min=1, max=WEBHOOK_URL_MAX_LENGTH),
        metadata={
            "description": "http or https, on an allowed port, at a public address: a private, "
            "loopback or link-local one is refused (400 `webhook_url_not_allowed`), and is "
            "checked again at each delivery. Redirects are not followed.",
            "format": "uri",
        },
    )
    event_types = _event_types(load_default=list)
    is_enabled = fields.Boolean(load_default=True)
    team_id = Guid(
        metadata={"description": "Subscribe for this team (its admins only); absent: for me."}
    )


class WebhookUpdateSchema(RequestSchema):
    read_models = (WebhookSchema,)

    url = fields.String(
        validate=validate.Length(min=1, max=WEBHOOK_URL_MAX_LENGTH), metadata={"format": "uri"}
    )
    event_types = _event_types()
    is_enabled = fields.Boolean(
        metadata={"description": "Switching it on again forgets its failures."}
    )


class WebhookAttemptSchema(Schema):
    attempted_utc = UtcDateTime(required=True)
    succeeded = fields.Boolean(required=True)
    status_code = fields.Integer(
        required=True, allow_none=True, metadata={"description": "Null when no answer came."}
    )
    latency_ms = fields.Integer(required=True, metadata={"minimum": 0})
    response_excerpt = fields.String(
        required=True, metadata={"description": "The start of the answer's body (1000 at most)."}
    )
    error = fields.String(required=True, allow_none=True)


class WebhookDeliverySchema(Schema):
    delivery_id = Guid(
        required=True,
        attribute="id",
        metadata={"description": "Also its `webhook-id` header, the same on every try."},
    )
    event_type = fields.String(required=True)
    event_id = Guid(required=True, allow_none=True, metadata={"description": "Null for a test."})
    state = fields.Enum(DeliveryState, by_value=True, required=True)
    created_utc = UtcDateTime(required=True)
    attempt_count = fields.Integer(required=True, metadata={"minimum": 0})
    attempts = fields.List(fields.Nested(WebhookAttemptSchema), required=True)


# --- the payloads (the document's `webhooks` section) ------------------------------------
# Every body is the envelope; each event type narrows `type` to its name and `data` to one
# of the shapes below (app.api.webhooks.documentation, EVENT_DATA).


class WebhookEnvelopeSchema(Schema):
    type = fields.String(
        required=True, metadata={"description": "The event type: one of the document's webhooks."}
    )
    timestamp = UtcDateTime(required=True, metadata={"description": "When it happened."})
    data = fields.Dict(
        required=True,
        metadata={"description": "The event's ids and public fields, shaped by its type."},
    )


class WebhookTrackableDataSchema(Schema):
    """A trackable's event: its ids, and the public fields any viewer saw at the time."""

    event_id = Guid(required=True)
    trackable_id = Guid(required=True)
    public_code = fields.String(
        required=True, metadata={"description": "The trackable's public code."}
    )
    name = fields.String(required=True, metadata={"description": "The trackable's name."})
    group_id = Guid(metadata={"description": "The trackable's group, when it is in one."})
    team_id = Guid(metadata={"description": "The trackable's team, when it has one."})


class WebhookTrackableCommentDataSchema(WebhookTrackableDataSchema):
    comment_id = Guid(required=True, metadata={"description": "The comment (never its text)."})


class WebhookJourneyStopDataSchema(WebhookTrackableDataSchema):
    stop_id = Guid(required=True, metadata={"description": "The journey stop."})


class WebhookTrackableNoteDataSchema(WebhookTrackableDataSchema):
    note_id = Guid(required=True, metadata={"description": "The note it was attached to."})


class WebhookGroupItemDataSchema(WebhookTrackableDataSchema):
    group_id = Guid(
        required=True, metadata={"description": "The group it joined, or the one it left."}
    )


class WebhookTeamDataSchema(Schema):
    """A team's event: its ids and the team's name (fixed after creation)."""

    event_id = Guid(required=True)
    team_id = Guid(required=True)
    team_name = fields.String(required=True, metadata={"description": "The team's name."})


class WebhookTeamNoteDataSchema(WebhookTeamDataSchema):
    note_id = Guid(required=True, metadata={"description": "The team note (never its text)."})


class WebhookMembershipDataSchema(WebhookTeamDataSchema):
    membership_id = Guid(required=True, metadata={"description": "The membership."})


class WebhookNotePublishedDataSchema(Schema):
    """A note newly in anonymous discovery, in an area the subscriber watches."""

    event_id = Guid(required=True)
    note_id = Guid(required=True)
    content_language = fields.String(
        required=True, metadata={"description": "The note's content language (a BCP 47 tag)."}
    )
    team_id = Guid(metadata={"description": "The note's team, when it is a team note."})


class WebhookTestDataSchema(Schema):
    webhook_id = Guid(required=True)
