"""Personal data export: ask for an export, follow it, download it."""

from app.api.privacy.routes import blp

__all__ = ["blp"]
