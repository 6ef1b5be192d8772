"""Notes area: one blueprint (routes.py), with the GPX routes in gpx.py."""

from app.api.notes import gpx, routes

__all__ = ["gpx", "routes"]
