"""Where Leaflet's files are: the xstatic-leaflet package ships Leaflet's script, style
sheet and images, which app.web.routes serves from our own origin under their version
(`/static/leaflet/<version>/...`, cached for a year) for the pannable journey map."""

from __future__ import annotations

from pathlib import Path

import xstatic.pkg.leaflet as xstatic_leaflet

LEAFLET_DIST = Path(xstatic_leaflet.BASE_DIR)
LEAFLET_VERSION: str = xstatic_leaflet.VERSION
LEAFLET_MAX_AGE = 365 * 86400
