"""Area watches (issue 25, beyond the contract): the caller's watched map windows."""

from app.api.watches.routes import blp

__all__ = ["blp"]
