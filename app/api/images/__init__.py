"""Images area: one blueprint (routes.py)."""

from app.api.images.routes import blp

__all__ = ["blp"]
