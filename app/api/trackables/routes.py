"""The trackables blueprint (contract: Trackables: reads, creation, groups; lookup and
active sessions). Routes live in the modules beside this one."""

from __future__ import annotations

from app.api.base import Blueprint

blp = Blueprint("trackables", __name__, url_prefix="/api", description="Trackables")
