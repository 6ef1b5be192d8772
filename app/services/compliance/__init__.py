"""Compliance (contract: Compliance): tracked system errors (500 tickets) so far."""

from app.services.compliance.tracked_errors import track_unexpected_error

__all__ = ["track_unexpected_error"]
