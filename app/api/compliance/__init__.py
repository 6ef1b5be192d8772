"""Compliance area: content reports, error tickets, support requests, review."""

from app.api.compliance.routes import blp

__all__ = ["blp"]
