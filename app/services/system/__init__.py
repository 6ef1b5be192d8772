"""System (contract: System): the client status, beta channel, IP location and the
locality of a coordinate."""

from app.services.system.status import (
    EXPERIENCE_MODES,
    MAP_SOURCES,
    beta_android,
    coordinate_country,
    coordinate_locality,
    identify_place,
    locate_ip,
    resolve_status,
)

__all__ = [
    "EXPERIENCE_MODES",
    "MAP_SOURCES",
    "beta_android",
    "coordinate_country",
    "coordinate_locality",
    "identify_place",
    "locate_ip",
    "resolve_status",
]
