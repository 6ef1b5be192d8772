"""System metadata (contract: System, Versioning): privacy and map-source resolution,
mobile client gating, IP location and reverse geocoding."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.integrations.geo import GeoSettings
    from app.integrations.place_names import PlaceIds

from app.auth import Viewer

LATEST = "latest_and_greatest"
NO_THIRD_PARTIES = "no_3rd_parties"
EXPERIENCE_MODES = (LATEST, NO_THIRD_PARTIES)
HOSTED_MAPS = "hosted_maps"
OPENSTREETMAP = "openstreetmap"
GOOGLE_MAPS = "google"
MAP_SOURCES = (HOSTED_MAPS, OPENSTREETMAP, GOOGLE_MAPS)


def resolve_status(
    viewer: Viewer, *, cookies: Mapping[str, str], client_ip: str, config: Mapping[str, Any]
) -> dict[str, Any]:
    """GET /api/system/status: saved preference beats the visitor cookie beats the default;
    a private, local or unresolved client IP forces `no_3rd_parties` and hosted tiles."""
    user = viewer.user
    saved_mode = user.experience_mode if user and user.experience_mode in EXPERIENCE_MODES else None
    cookie_mode = cookies.get(config["EXPERIENCE_MODE_COOKIE"])
    cookie_mode = cookie_mode if cookie_mode in EXPERIENCE_MODES else None
    requested_mode = saved_mode or cookie_mode or config["DEFAULT_EXPERIENCE_MODE"]

    from app.integrations import geo

    forced = not geo.is_public_ip(client_ip)
    effective_mode = NO_THIRD_PARTIES if forced else requested_mode
    third_party = effective_mode == LATEST

    saved_map = user.map_source if user and user.map_source in MAP_SOURCES else None
    cookie_map = cookies.get(config["MAP_SOURCE_COOKIE"])
    cookie_map = cookie_map if cookie_map in MAP_SOURCES else None
    requested_map = saved_map or cookie_map

    google_configured = bool(config["GOOGLE_MAPS_API_KEY"])
    osm_configured = bool(config["OPENSTREETMAP_ENABLED"])
    allowed = {
        HOSTED_MAPS: True,
        OPENSTREETMAP: third_party and osm_configured,
        GOOGLE_MAPS: third_party and google_configured,
    }
    if requested_map and allowed[requested_map]:
        preferred = requested_map
    else:
        preferred = OPENSTREETMAP if allowed[OPENSTREETMAP] else HOSTED_MAPS

    return {
        "status": "online",
        "utc_now": datetime.now(UTC),
        "android_minimum_compatible_display_version": config["ANDROID_MIN_DISPLAY_VERSION"],
        "android_minimum_compatible_version_code": str(config["ANDROID_MIN_VERSION_CODE"]),
        "android_compatibility_message": config["ANDROID_COMPATIBILITY_MESSAGE"],
        "android_beta_page_url": config["ANDROID_BETA_PAGE_URL"],
        "requested_experience_mode": requested_mode,
        "effective_experience_mode": effective_mode,
        "uses_saved_experience_mode_preference": saved_mode is not None,
        "uses_visitor_experience_mode_preference_cookie": saved_mode is None
        and cookie_mode is not None,
        "third_party_browser_calls_allowed": third_party,
        "requested_map_source": requested_map,
        "preferred_map_source": preferred,
        "fallback_map_source": HOSTED_MAPS,
        "uses_saved_map_preference": saved_map is not None,
        "uses_visitor_map_preference_cookie": saved_map is None and cookie_map is not None,
        "google_maps_allowed": allowed[GOOGLE_MAPS],
        "google_maps_configured": google_configured,
        "open_street_map_allowed": allowed[OPENSTREETMAP],
        "open_street_map_configured": osm_configured,
        # Always: without a tile folder or MBTiles file the built-in base map is served.
        "hosted_maps_configured": True,
        "hosted_maps_forced_by_privacy": effective_mode == NO_THIRD_PARTIES,
        "hosted_map_tile_url_template": config["HOSTED_MAP_TILE_URL_TEMPLATE"],
        "limits": published_limits(config),
    }


def published_limits(config: Mapping[str, Any]) -> dict[str, Any]:
    """Caps and budgets clients may plan around (decisions: Lists, Trackable codes)."""
    return {
        "public_list_cap": config["PUBLIC_LIST_CAP"],
        "page_size_max": config["PAGE_SIZE_MAX"],
        "nearby_default_radius_km": config["NEARBY_RADIUS_KM"],
        "nearby_max_radius_km": config["NEARBY_MAX_RADIUS_KM"],
        "trackables_per_group_max": config["TRACKABLES_PER_GROUP_MAX"],
        "max_request_bytes": config["MAX_CONTENT_LENGTH"],
        "max_form_parts": config["MAX_FORM_PARTS"],
        "max_form_field_bytes": config["MAX_FORM_MEMORY_SIZE"],
        "image_max_bytes": config["IMAGE_MAX_BYTES"],
        "image_max_pixels": config["IMAGE_MAX_PIXELS"],
        "image_max_decode_bytes": config["IMAGE_MAX_DECODE_BYTES"],
        "image_max_aspect_ratio": config["IMAGE_MAX_ASPECT_RATIO"],
        "images_per_parent_max": config["IMAGES_PER_PARENT_MAX"],
        "gpx_max_bytes": config["GPX_MAX_BYTES"],
        "sync_push_max_notes": config["SYNC_PUSH_MAX_NOTES"],
        "sync_push_max_categories": config["SYNC_PUSH_MAX_CATEGORIES"],
        "sync_push_link_budget_seconds": config["SYNC_PUSH_LINK_BUDGET_SECONDS"],
        "secret_code_guesses": {
            "attempts": config["SECRET_GUESS_LIMIT"],
            "network_attempts": config["SECRET_GUESS_NETWORK_LIMIT"],
            "account_attempts": config["SECRET_GUESS_ACCOUNT_LIMIT"],
            "account_network_attempts": config["SECRET_GUESS_ACCOUNT_NETWORK_LIMIT"],
            "window_minutes": config["SECRET_GUESS_WINDOW_MINUTES"],
            "alarm_misses": config["SECRET_GUESS_ALARM_MISSES"],
        },
        # Budgets per account, each {attempts, window_minutes} like the guess budget; the
        # windows of creations and uploads are fixed (trackables.creation.hourly_budget,
        # images.images.daily_budget).
        "trackable_creations": {
            "attempts": config["TRACKABLES_PER_USER_PER_HOUR"],
            "window_minutes": 60,
        },
        "image_uploads": {"attempts": config["IMAGES_PER_USER_PER_DAY"], "window_minutes": 1440},
        "account_exports": {
            "attempts": config["EXPORTS_PER_USER_PER_DAY"],
            "window_minutes": 1440,
        },
        "webhook_sends": {
            "attempts": config["WEBHOOK_MANUAL_SENDS_PER_HOUR"],
            "window_minutes": 60,
        },
        "webhook_sends_per_webhook": {
            "attempts": config["WEBHOOK_MANUAL_SENDS_PER_WEBHOOK_PER_HOUR"],
            "window_minutes": 60,
        },
        "secret_rotations": {
            "attempts": config["SECRET_ROTATE_LIMIT"],
            "window_minutes": config["SECRET_ROTATE_WINDOW_MINUTES"],
        },
        "finder_photos": {
            "per_entry": config["FINDER_PHOTOS_PER_ENTRY"],
            "per_session": config["FINDER_PHOTOS_PER_SESSION"],
            "per_network": config["FINDER_PHOTOS_PER_NETWORK"],
            "window_minutes": config["FINDER_PHOTOS_WINDOW_MINUTES"],
        },
        "rate_limits": {
            "login": config["RATE_LIMIT_LOGIN"],
            "register": config["RATE_LIMIT_REGISTER"],
            "account_mail": config["RATE_LIMIT_ACCOUNT_MAIL"],
            "compliance": config["RATE_LIMIT_COMPLIANCE"],
            "trackable_labels": config["RATE_LIMIT_TRACKABLE_LABELS"],
            "link_verify": config["RATE_LIMIT_LINK_VERIFY"],
        },
        "report_duplicate_window_minutes": config["REPORT_DUPLICATE_WINDOW_MINUTES"],
    }


def beta_android(config: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "display_version": config["ANDROID_BETA_DISPLAY_VERSION"],
        "version_code": str(config["ANDROID_BETA_VERSION_CODE"]),
        "minimum_compatible_display_version": config["ANDROID_MIN_DISPLAY_VERSION"],
        "minimum_compatible_version_code": str(config["ANDROID_MIN_VERSION_CODE"]),
        "release_notes": config["ANDROID_BETA_RELEASE_NOTES"],
        "download_url": config["ANDROID_BETA_DOWNLOAD_URL"],
        "beta_page_url": config["ANDROID_BETA_PAGE_URL"],
    }


def geo_settings(config: Mapping[str, Any], instance_path: str) -> GeoSettings:
    from app.integrations.geo import GeoSettings

    return GeoSettings(
        geoip_provider=config["GEOIP_PROVIDER"],
        geoip_database_path=config["GEOIP_DATABASE_PATH"],
        geocoder_provider=config["GEOCODER_PROVIDER"],
        geocoder_http_url=config["GEOCODER_HTTP_URL"],
        geocoder_max_distance_km=config["GEOCODER_MAX_DISTANCE_KM"],
        cache_dir=str(Path(instance_path) / "geo"),
    )


def locate_ip(
    client_ip: str, *, config: Mapping[str, Any], instance_path: str, development: bool
) -> dict[str, Any]:
    """GET /api/system/ip-location: best effort; a private or local IP is a 200 with a reason
    unless a development fallback IP is configured."""
    from app.integrations import geo

    lookup_ip = client_ip
    used_fallback = False
    if development and config["DEV_FALLBACK_IP"] and not geo.is_public_ip(client_ip):
        lookup_ip, used_fallback = config["DEV_FALLBACK_IP"], True
    result = geo.ip_locator(geo_settings(config, instance_path)).locate(lookup_ip)
    return {
        **asdict(result),
        "client_ip_address": client_ip,
        "lookup_ip_address": lookup_ip,
        "used_development_fallback_ip": used_fallback,
    }


def coordinate_locality(
    latitude: Any, longitude: Any, *, config: Mapping[str, Any], instance_path: str
) -> dict[str, Any]:
    """GET /api/system/coordinate-locality: reverse geocoding, never naming a far town."""
    from app.integrations import geo

    lat, lon = _as_float(latitude), _as_float(longitude)
    if lat is None or lon is None or not geo.valid_coordinates(lat, lon):
        return asdict(geo.unresolved("Coordinates", "invalid-coordinates"))
    return asdict(geo.reverse_geocoder(geo_settings(config, instance_path)).reverse(lat, lon))


def coordinate_country(
    latitude: float, longitude: float, *, config: Mapping[str, Any], instance_path: str
) -> str:
    """The ISO 3166-1 alpha-2 code of the country at a point (nearest town, offline
    index), "" where no town is near: journey statistics count countries by it."""
    from app.integrations import geo

    return geo.country_code_at(geo_settings(config, instance_path), latitude, longitude)


def identify_place(
    label: str, latitude: float, longitude: float, *, config: Mapping[str, Any], instance_path: str
) -> PlaceIds:
    """What a saved location label names: its country code and, when the offline
    geocoder wrote it, its GeoNames city (app.integrations.place_names.identify)."""
    from app.integrations import geo_data, place_names

    index = geo_data.get_index(geo_settings(config, instance_path).cache_dir)
    return place_names.identify(label, latitude, longitude, index)


def _as_float(value: Any) -> float | None:
    """Query values arrive as text; anything that is not a plain finite number is None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
