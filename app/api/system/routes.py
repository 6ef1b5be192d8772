"""System routes: status, mobile beta metadata, IP location, reverse geocoding."""

from __future__ import annotations

from flask import current_app, request

from app.api.base import Blueprint
from app.api.system.schemas import (
    BetaAndroidSchema,
    CoordinateQuerySchema,
    IpLocationSchema,
    LocalitySchema,
    StatusSchema,
)
from app.auth import current_viewer
from app.extensions import client_ip
from app.platform.version import service_version
from app.services import system

blp = Blueprint("system", __name__, url_prefix="/api/system", description="System metadata")


@blp.route("/status", methods=["GET"])
@blp.auth(optional=True)
@blp.response(200, StatusSchema)
def get_status() -> dict:
    """Get service status, client gating and privacy/map resolution

    Experience mode and map source come from the signed-in user's saved preference, else
    the visitor cookie (`experience_mode`, `map_source`), else the default. A private,
    local or unresolved client IP forces `no_3rd_parties` and hosted map tiles.
    `serviceVersion` names the release answering.
    """
    answer = system.resolve_status(
        current_viewer(), cookies=request.cookies, client_ip=client_ip(), config=current_app.config
    )
    # The release is the platform's to know, not a rule of the System area.
    return {**answer, "service_version": service_version()}


@blp.route("/beta-android", methods=["GET"])
@blp.response(200, BetaAndroidSchema)
def get_beta_android() -> dict:
    """Get the staged Android beta metadata"""
    return system.beta_android(current_app.config)


@blp.route("/ip-location", methods=["GET"])
@blp.response(200, IpLocationSchema)
def get_ip_location() -> dict:
    """Locate the caller by IP address (best effort)

    Always 200: an unresolved lookup says why in `failureReason`.
    """
    return system.locate_ip(
        client_ip(),
        config=current_app.config,
        instance_path=current_app.instance_path,
        development=current_app.config["ENV_NAME"] != "production",
    )


@blp.route("/coordinate-locality", methods=["GET"])
@blp.arguments(CoordinateQuerySchema, location="query")
@blp.response(200, LocalitySchema)
def get_coordinate_locality(query: dict) -> dict:
    """Name the locality of a coordinate (reverse geocoding)

    Always 200: missing or invalid coordinates give `resolved` false and `failureReason`
    `invalid-coordinates`; a point far from any town gives `no-locality-nearby`.
    """
    return system.coordinate_locality(
        query.get("latitude"),
        query.get("longitude"),
        config=current_app.config,
        instance_path=current_app.instance_path,
    )
