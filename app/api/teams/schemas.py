"""Schemas of the team routes (contract: Team, Team invite link, Teams; decisions: Teams).
Team notes use the note schemas of app/api/notes."""

from __future__ import annotations

from marshmallow import fields, validate

from app.api.base import Guid, Regexp, RequestSchema, Schema, UtcDateTime
from app.api.links.schemas import ExternalLinkInputSchema
from app.api.notes.schemas import NOT_BLANK, language_field
from app.models.enums import NoteVisibility
from app.models.team import (
    TEAM_DESCRIPTION_MAX_LENGTH,
    TEAM_NAME,
    TEAM_NAME_MAX_LENGTH,
    TEAM_NAME_MIN_LENGTH,
    TEAM_TITLE_MAX_LENGTH,
    JoinPolicy,
    MembershipStatus,
    PageVisibility,
    TeamRole,
)

NAME_RULES = [
    validate.Length(min=TEAM_NAME_MIN_LENGTH, max=TEAM_NAME_MAX_LENGTH),
    Regexp(
        TEAM_NAME,
        error="Use letters, digits, spaces, '-' and '_', starting and ending with a letter "
        "or digit.",
    ),
]

# --- teams -------------------------------------------------------------------------------


class TeamSchema(Schema):
    """A team record, with the caller's own membership in it (dumps services.teams'
    TeamView)."""

    team_id = Guid(required=True, attribute="team.id")
    name = fields.String(
        required=True,
        attribute="team.name",
        dump_only=True,  # `readOnly`: fixed after creation (contract notes: Teams, Names)
        metadata={"description": "Unique public handle (public routes); fixed after creation."},
    )
    team_slug = fields.String(
        required=True,
        attribute="team.slug",
        metadata={"description": "Lowercase URL form of the name."},
    )
    title = fields.String(required=True, attribute="team.title")
    description = fields.String(required=True, attribute="team.description")
    external_link_url = fields.String(
        required=True, attribute="team.external_link_url", allow_none=True
    )
    external_link_description = fields.String(
        required=True, attribute="team.external_link_description"
    )
    join_policy = fields.Enum(
        JoinPolicy, required=True, by_value=True, attribute="team.join_policy"
    )
    page_visibility = fields.Enum(
        PageVisibility, required=True, by_value=True, attribute="team.page_visibility"
    )
    default_note_visibility = fields.Enum(
        NoteVisibility, required=True, by_value=True, attribute="team.default_note_visibility"
    )
    content_language = fields.String(
        required=True, attribute="team.content_language", metadata={"example": "en-US"}
    )
    member_count = fields.Integer(
        required=True, metadata={"description": "Active members, admins included."}
    )
    created_utc = UtcDateTime(required=True, attribute="team.created_utc")
    updated_utc = UtcDateTime(required=True, attribute="team.updated_utc")
    last_activity_utc = UtcDateTime(
        required=True,
        metadata={"description": "Latest of the team's own activity and its notes' activity."},
    )
    membership_id = Guid(
        required=True, allow_none=True, metadata={"description": "The caller's record."}
    )
    membership_status = fields.Enum(MembershipStatus, required=True, by_value=True, allow_none=True)
    role = fields.Enum(
        TeamRole,
        required=True,
        by_value=True,
        allow_none=True,
        metadata={"description": "null until active."},
    )


class TeamSettingsSchema(ExternalLinkInputSchema):
    """Team settings; fields present are applied, the others stay."""

    read_models = (TeamSchema,)

    name = fields.String(
        validate=NAME_RULES,
        metadata={
            "description": "Fixed after creation: only the team's current name is accepted "
            "(400 on `name` otherwise); leave it out to keep it."
        },
    )
    title = fields.String(
        allow_none=True,
        validate=validate.Length(max=TEAM_TITLE_MAX_LENGTH),
        metadata={"description": "Display title; empty means the name."},
    )
    description = fields.String(
        allow_none=True, validate=validate.Length(max=TEAM_DESCRIPTION_MAX_LENGTH)
    )
    # Defaults only on create: generated clients send a field's OpenAPI `default` whenever
    # it is left out, so a settings change naming only the title would reset these.
    join_policy = fields.Enum(JoinPolicy, by_value=True)
    page_visibility = fields.Enum(PageVisibility, by_value=True)
    default_note_visibility = fields.Enum(
        NoteVisibility,
        by_value=True,
        metadata={"description": "For team notes created without one."},
    )
    content_language = language_field(
        metadata={"description": "Default language of team notes.", "example": "en-US"}
    )


class TeamCreateSchema(TeamSettingsSchema):
    name = fields.String(
        required=True,
        validate=NAME_RULES,
        metadata={"description": "Unique (ignoring case and separators); fixed after creation."},
    )
    join_policy = fields.Enum(JoinPolicy, by_value=True, metadata={"default": "RequestsAllowed"})
    page_visibility = fields.Enum(PageVisibility, by_value=True, metadata={"default": "Public"})
    default_note_visibility = fields.Enum(
        NoteVisibility,
        by_value=True,
        metadata={"default": "Private", "description": "For team notes created without one."},
    )


# --- memberships -------------------------------------------------------------------------


class MembershipSchema(Schema):
    """A membership record: a request, an invitation or an active membership."""

    membership_id = Guid(required=True)
    team_id = Guid(required=True)
    user_name = fields.String(required=True)
    status = fields.Enum(
        MembershipStatus,
        required=True,
        by_value=True,
        metadata={"description": "Denied and Refused only in the answer that ends a record."},
    )
    is_admin = fields.Boolean(required=True)
    created_utc = UtcDateTime(required=True)
    updated_utc = UtcDateTime(required=True)


class InviteSchema(RequestSchema):
    read_models = (MembershipSchema,)

    user_name = fields.String(
        required=True, validate=[validate.Length(max=64), NOT_BLANK], metadata={"example": "ada"}
    )


# --- invite links ------------------------------------------------------------------------


class InviteLinkSchema(Schema):
    """An invite link record (dumps services.teams' InviteLinkView)."""

    invite_link_id = Guid(required=True, attribute="link.id")
    team_id = Guid(required=True, attribute="team.id")
    team_name = fields.String(required=True, attribute="team.name")
    team_slug = fields.String(required=True, attribute="team.slug")
    code = fields.String(
        required=True,
        attribute="link.code",
        metadata={"description": "The invite code of the join route."},
    )
    created_by_display_name = fields.String(required=True, attribute="link.created_by.display_text")
    created_by_current_user = fields.Boolean(required=True)
    inviter_is_currently_admin = fields.Boolean(
        required=True, metadata={"description": "A link works only while its creator is an admin."}
    )
    is_single_use = fields.Boolean(required=True, attribute="link.is_single_use")
    created_utc = UtcDateTime(required=True, attribute="link.created_utc")


class InviteLinkCreateSchema(RequestSchema):
    read_models = (InviteLinkSchema,)

    is_single_use = fields.Boolean(load_default=False)


class JoinResultSchema(Schema):
    team_slug = fields.String(required=True)
    membership_status = fields.Enum(MembershipStatus, required=True, by_value=True)
