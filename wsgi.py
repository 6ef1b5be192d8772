"""WSGI entry point: `gunicorn wsgi:app` (and `flask --app wsgi ...`).

Under gunicorn the master makes the app once and its workers fork from it
(app.platform.forking says what each worker starts for itself).

A start refused for its settings prints the refusal once, with no traceback, and exits
with gunicorn's "worker failed to boot" status (3), so the server stops instead of
starting new workers that would be refused again."""

import os
import sys

from app import InsecureConfiguration, create_app
from app.platform import forking

# gunicorn's master, preloading the app for its workers (gunicorn.conf.py names its pid).
if os.environ.get("SERVER_SOFTWARE", "").startswith("gunicorn/") and os.environ.get(
    "LOCATION_NOTES_GUNICORN_MASTER"
) == str(os.getpid()):
    forking.preloading()

try:
    app = create_app()
except InsecureConfiguration as refusal:
    print(refusal, file=sys.stderr)
    raise SystemExit(3) from None
