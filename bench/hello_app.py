"""The hello floor: a hello-world Flask app under the same gunicorn settings, for the
trivial routes (bench/discovery_floor.py compares the API's `GET /healthz` and `GET
/api/auth/manage/info` with it). No project code, no database, no token check: what a
Flask request costs with nothing in it.
"""

from __future__ import annotations

from flask import Flask, jsonify

app = Flask(__name__)


@app.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    return jsonify(status="ok")


@app.get("/api/auth/manage/info")
def info():  # type: ignore[no-untyped-def]
    return jsonify(
        email="bench0@example.com",
        isEmailConfirmed=True,
        experienceMode=None,
        mapSource=None,
    )
