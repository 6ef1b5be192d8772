"""Identity and account routes: one blueprint, auth routes in `routes`, account management
in `manage`."""

from app.api.identity import manage  # noqa: F401 - registers the manage routes on blp
from app.api.identity.routes import blp

__all__ = ["blp"]
