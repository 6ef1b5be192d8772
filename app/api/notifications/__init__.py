"""The inbox: the caller's notifications, their unread count, marking read."""

from app.api.notifications.routes import blp

__all__ = ["blp"]
