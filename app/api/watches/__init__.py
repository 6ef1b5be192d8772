"""Area watches (beyond the contract): the caller's watched map windows."""

from app.api.watches.routes import blp

__all__ = ["blp"]
