"""Webhooks: subscriptions, their deliveries, and the document's `webhooks`."""

from app.api.webhooks.routes import blp

__all__ = ["blp"]
