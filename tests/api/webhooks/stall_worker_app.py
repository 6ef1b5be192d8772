"""The app of the `flask worker` processes the stall scenario starts (tests/api/webhooks/
stall.py): the database of STALL_DATABASE_URL, mail written to files in STALL_OUTBOX (so
the test sees when each is written), exports under STALL_EXPORTS, and deliveries allowed
to the loopback ports of STALL_PORTS (the black hole's and the prompt receiver's)."""

from __future__ import annotations

import os

from app import create_app

app = create_app(
    {
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": os.environ["STALL_DATABASE_URL"],
        "MAIL_BACKEND": "file",
        "MAIL_OUTBOX_DIR": os.environ["STALL_OUTBOX"],
        "EXPORT_ROOT": os.environ["STALL_EXPORTS"],
        "IMAGE_ROOT": os.environ["STALL_EXPORTS"] + "-images",
        "RATELIMIT_STORAGE_URI": "memory://",
        "LOG_LEVEL": "INFO",
        "WEBHOOKS_ALLOW_LOOPBACK": True,
        "WEBHOOK_ALLOWED_PORTS": [80, 443, *map(int, os.environ["STALL_PORTS"].split(","))],
        "WEBHOOK_TIMEOUT_SECONDS": float(os.environ.get("STALL_TIMEOUT_SECONDS", "5")),
    }
)
