"""WSGI entry point: `gunicorn wsgi:app` (and `flask --app wsgi ...`).

A start refused for its settings prints the refusal once, with no traceback, and exits
with gunicorn's "worker failed to boot" status (3), so the server stops instead of
starting new workers that would be refused again."""

import sys

from app import InsecureConfiguration, create_app

try:
    app = create_app()
except InsecureConfiguration as refusal:
    print(refusal, file=sys.stderr)
    raise SystemExit(3) from None
