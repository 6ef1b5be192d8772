"""Schemas of the System routes (contract: System, Versioning)."""

from __future__ import annotations

from marshmallow import fields

from app.api.base import Schema, UtcDateTime


class RateLimitsSchema(Schema):
    login = fields.String(required=True)
    register = fields.String(required=True)
    account_mail = fields.String(required=True)
    compliance = fields.String(
        required=True,
        metadata={"description": "Content reports and error posts, per client address."},
    )
    trackable_labels = fields.String(
        required=True,
        metadata={
            "description": "Label sheets (`POST /api/trackables/labels`), per client address."
        },
    )
    link_verify = fields.String(
        required=True,
        metadata={
            "description": "Link checks (`POST /api/external-links/verify`), per client address."
        },
    )


class GuessBudgetSchema(Schema):
    attempts = fields.Integer(
        required=True,
        metadata={
            "description": "Code misses one anonymous client (IPv4 address, IPv6 /64) may make."
        },
    )
    network_attempts = fields.Integer(
        required=True,
        metadata={
            "description": "Code misses all anonymous clients of one IPv4 /24 or IPv6 /48 may make."
        },
    )
    account_attempts = fields.Integer(
        required=True,
        metadata={
            "description": "Code misses a signed-in account with a confirmed e-mail address "
            "may make, from any address (instead of its address's budget)."
        },
    )
    account_network_attempts = fields.Integer(
        required=True,
        metadata={
            "description": "Code misses all such accounts of one IPv4 /24 or IPv6 /48 may make."
        },
    )
    window_minutes = fields.Integer(required=True)
    alarm_misses = fields.Integer(
        required=True,
        metadata={
            "description": "Misses of all clients in one window that raise an operator alarm "
            "(no lockout); 0: never."
        },
    )


class AccountLimitSchema(Schema):
    attempts = fields.Integer(
        required=True,
        metadata={"description": "Per account, within any window of this length (more is 429)."},
    )
    window_minutes = fields.Integer(required=True)


class FinderPhotoLimitsSchema(Schema):
    per_entry = fields.Integer(
        required=True,
        metadata={"description": "Most photos one trackable comment or journey stop holds."},
    )
    per_session = fields.Integer(
        required=True,
        metadata={
            "description": "An anonymous finder's photos per access session, within any "
            "window (more is 429 `finder_photo_limit_reached`)."
        },
    )
    per_network = fields.Integer(
        required=True,
        metadata={"description": "Anonymous finders' photos per network, within any window."},
    )
    window_minutes = fields.Integer(required=True)


class LimitsSchema(Schema):
    public_list_cap = fields.Integer(required=True)
    page_size_max = fields.Integer(
        required=True,
        metadata={"description": "The largest `limit` a paged list takes (PAGE_SIZE_MAX)."},
    )
    nearby_default_radius_km = fields.Float(required=True)
    nearby_max_radius_km = fields.Float(required=True)
    trackables_per_group_max = fields.Integer(required=True)
    max_request_bytes = fields.Integer(required=True)
    max_form_parts = fields.Integer(
        required=True,
        metadata={"description": "Most parts a multipart form may have (more is 413)."},
    )
    max_form_field_bytes = fields.Integer(
        required=True,
        metadata={"description": "Largest text part of a multipart form (larger is 413)."},
    )
    image_max_bytes = fields.Integer(required=True)
    image_max_pixels = fields.Integer(required=True)
    image_max_decode_bytes = fields.Integer(
        required=True,
        metadata={"description": "Most memory decoding one upload may take (more is 400)."},
    )
    image_max_aspect_ratio = fields.Float(
        required=True,
        metadata={"description": "Longest side over shortest side of an upload (more is 400)."},
    )
    images_per_parent_max = fields.Integer(
        required=True, metadata={"description": "Most images one parent holds (more is 400)."}
    )
    gpx_max_bytes = fields.Integer(required=True)
    sync_push_max_notes = fields.Integer(
        required=True, metadata={"description": "Most notes one sync push may carry (more is 400)."}
    )
    sync_push_max_categories = fields.Integer(
        required=True,
        metadata={"description": "Most categories one sync push may carry (more is 400)."},
    )
    sync_push_link_budget_seconds = fields.Float(
        required=True,
        metadata={
            "description": "Time one sync push spends checking links in all; links not "
            "reached are `validation_failed` (not checked)."
        },
    )
    secret_code_guesses = fields.Nested(GuessBudgetSchema, required=True)
    trackable_creations = fields.Nested(
        AccountLimitSchema,
        required=True,
        metadata={
            "description": "Trackables created, single (POST /api/trackables) or in groups "
            "(each item counts)."
        },
    )
    image_uploads = fields.Nested(
        AccountLimitSchema, required=True, metadata={"description": "Images uploaded (any parent)."}
    )
    secret_rotations = fields.Nested(
        AccountLimitSchema,
        required=True,
        metadata={"description": "POST /api/trackables/{id}/secret/rotate."},
    )
    account_exports = fields.Nested(
        AccountLimitSchema, required=True, metadata={"description": "POST /api/account/export."}
    )
    webhook_sends = fields.Nested(
        AccountLimitSchema,
        required=True,
        metadata={
            "description": "Webhook test messages and redeliveries of an account, counted "
            "together (POST /api/webhooks/{webhookId}/test and .../redeliver)."
        },
    )
    webhook_sends_per_webhook = fields.Nested(
        AccountLimitSchema,
        required=True,
        metadata={"description": "The same, of one webhook, whoever of its admins asks."},
    )
    finder_photos = fields.Nested(
        FinderPhotoLimitsSchema,
        required=True,
        metadata={"description": "Photos of a trackable comment or journey stop."},
    )
    rate_limits = fields.Nested(RateLimitsSchema, required=True)
    report_duplicate_window_minutes = fields.Integer(
        required=True,
        metadata={"description": "A repeated report of the same content within it is one."},
    )


class StatusSchema(Schema):
    status = fields.String(required=True, metadata={"example": "online"})
    utc_now = UtcDateTime(required=True)
    android_minimum_compatible_display_version = fields.String(required=True)
    android_minimum_compatible_version_code = fields.String(required=True)
    android_compatibility_message = fields.String(required=True)
    android_beta_page_url = fields.String(required=True)
    requested_experience_mode = fields.String(
        required=True, metadata={"enum": ["latest_and_greatest", "no_3rd_parties"]}
    )
    effective_experience_mode = fields.String(
        required=True, metadata={"enum": ["latest_and_greatest", "no_3rd_parties"]}
    )
    uses_saved_experience_mode_preference = fields.Boolean(required=True)
    uses_visitor_experience_mode_preference_cookie = fields.Boolean(required=True)
    third_party_browser_calls_allowed = fields.Boolean(required=True)
    requested_map_source = fields.String(required=True, allow_none=True)
    preferred_map_source = fields.String(
        required=True, metadata={"enum": ["hosted_maps", "openstreetmap", "google"]}
    )
    fallback_map_source = fields.String(required=True)
    uses_saved_map_preference = fields.Boolean(required=True)
    uses_visitor_map_preference_cookie = fields.Boolean(required=True)
    google_maps_allowed = fields.Boolean(required=True)
    google_maps_configured = fields.Boolean(required=True)
    open_street_map_allowed = fields.Boolean(required=True, data_key="openStreetMapAllowed")
    open_street_map_configured = fields.Boolean(required=True, data_key="openStreetMapConfigured")
    hosted_maps_configured = fields.Boolean(required=True)
    hosted_maps_forced_by_privacy = fields.Boolean(required=True)
    hosted_map_tile_url_template = fields.String(
        required=True, metadata={"example": "/maps/tiles/{z}/{x}/{y}.png"}
    )
    limits = fields.Nested(LimitsSchema, required=True)
    service_version = fields.String(
        required=True,
        metadata={
            "description": "The release of the service answering (semantic versioning, as "
            "its pyproject.toml says); `unknown` when the installation does not say.",
            "example": "0.2.0",
        },
    )


class BetaAndroidSchema(Schema):
    display_version = fields.String(required=True)
    version_code = fields.String(required=True)
    minimum_compatible_display_version = fields.String(required=True)
    minimum_compatible_version_code = fields.String(required=True)
    release_notes = fields.String(required=True)
    download_url = fields.String(required=True)
    beta_page_url = fields.String(required=True)


class LocalitySchema(Schema):
    resolved = fields.Boolean(required=True)
    source_kind = fields.String(required=True, metadata={"enum": ["IpAddress", "Coordinates"]})
    coordinate_source_provider = fields.String(required=True)
    locality_source_provider = fields.String(required=True)
    latitude = fields.Float(required=True, allow_none=True)
    longitude = fields.Float(required=True, allow_none=True)
    city = fields.String(required=True)
    state_or_province = fields.String(required=True)
    country = fields.String(required=True)
    is_approximate = fields.Boolean(required=True)
    accuracy_radius_km = fields.Float(required=True, allow_none=True)
    failure_reason = fields.String(required=True, metadata={"description": "Empty on success."})


class IpLocationSchema(LocalitySchema):
    client_ip_address = fields.String(required=True, data_key="clientIpAddress")
    lookup_ip_address = fields.String(required=True)
    used_development_fallback_ip = fields.Boolean(required=True)


class CoordinateQuerySchema(Schema):
    # Text on purpose: bad coordinates are a 200 with failureReason, not a 400 (contract).
    latitude = fields.String(metadata={"example": "52.52"})
    longitude = fields.String(metadata={"example": "13.405"})
