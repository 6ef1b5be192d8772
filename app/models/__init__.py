"""All models, imported here so metadata (create_all, Alembic) sees every table."""

from app.models.base import Base
from app.models.compliance import ContentReport
from app.models.identity import EmailCode, LoginFailure, RecoveryCode, RefreshToken
from app.models.user import User

__all__ = [
    "Base",
    "ContentReport",
    "EmailCode",
    "LoginFailure",
    "RecoveryCode",
    "RefreshToken",
    "User",
]
