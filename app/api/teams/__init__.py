"""Teams area: one blueprint (routes.py), with the membership, invite link and team note
routes in their own modules."""

from app.api.teams import invite_links, memberships, notes, routes
from app.api.teams.routes import blp

__all__ = ["blp", "invite_links", "memberships", "notes", "routes"]
