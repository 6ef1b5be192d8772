"""The inbox's wire shapes: a notification, the unread count, the mark-read body, and the
mail settings."""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, validate, validates_schema

from app.api.base import Guid, RequestSchema, Schema, UtcDateTime
from app.models.notification_mail import MailChoice
from app.services.events import MAIL_LANGUAGES, EventType

READ_IDS_MAX = 500


class NotificationSchema(Schema):
    notification_id = Guid(required=True)
    event_type = fields.String(
        required=True,
        metadata={
            "description": "What happened (docs/contract/events.md, Events and notifications); "
            "a client treats a type it does not know as a generic change.",
            "enum": [kind.value for kind in EventType],
        },
    )
    created_utc = UtcDateTime(required=True, metadata={"description": "When it happened."})
    read_utc = UtcDateTime(
        required=True, allow_none=True, metadata={"description": "Null while unread."}
    )
    trackable_id = Guid(
        required=True, allow_none=True, metadata={"description": "The trackable concerned."}
    )
    group_id = Guid(
        required=True,
        allow_none=True,
        metadata={"description": "The group concerned: the trackable's, or the one it left."},
    )
    note_id = Guid(
        required=True,
        allow_none=True,
        metadata={
            "description": "The note concerned: the one a trackable was attached to, a "
            "team's note, or a newly public note."
        },
    )
    team_id = Guid(
        required=True,
        allow_none=True,
        metadata={"description": "The team of a team event (`team.*`), else null."},
    )
    text = fields.String(
        required=True,
        metadata={
            "description": "A short summary in the caller's language (the `language` of "
            "their notification settings, English until changed), made when read."
        },
    )


class UnreadCountSchema(Schema):
    unread_count = fields.Integer(required=True, metadata={"minimum": 0})


class MarkReadSchema(RequestSchema):
    """Exactly one of `notificationIds` and `upTo`."""

    read_models = ()

    notification_ids = fields.List(
        Guid(),
        validate=validate.Length(min=1, max=READ_IDS_MAX),
        metadata={
            "description": f"The notifications to mark read (1 to {READ_IDS_MAX}). Ids that "
            "are not the caller's are ignored."
        },
    )
    up_to = Guid(
        metadata={
            "description": "This notification and every older one of the caller's are marked "
            "read (as the list orders them). An id that is not the caller's changes nothing."
        }
    )

    @validates_schema
    def check_one(self, data: dict[str, Any], **kwargs: Any) -> None:
        given = [name for name in ("notification_ids", "up_to") if name in data]
        if len(given) != 1:
            message = "Give exactly one of notificationIds and upTo."
            raise ValidationError({"notificationIds": [message], "upTo": [message]})


MAIL_DESCRIPTION = (
    "`none`: no mail; `each`: one mail per notification; `daily`: at most one digest a "
    "day, at the service's digest hour, of the notifications still unread. Mail goes only "
    "to a confirmed address."
)


class NotificationSettingsSchema(Schema):
    mail = fields.Enum(
        MailChoice, by_value=True, required=True, metadata={"description": MAIL_DESCRIPTION}
    )
    language = fields.String(
        required=True,
        metadata={
            "description": "The language of the mail and of the inbox's texts.",
            "enum": list(MAIL_LANGUAGES),
        },
    )


class NotificationSettingsUpdateSchema(RequestSchema):
    """The fields present are applied; the others stay."""

    read_models = (NotificationSettingsSchema,)

    mail = fields.Enum(MailChoice, by_value=True, metadata={"description": MAIL_DESCRIPTION})
    language = fields.String(
        validate=validate.OneOf(MAIL_LANGUAGES),
        metadata={"description": "The language of the mail and of the inbox's texts."},
    )
