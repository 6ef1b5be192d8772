"""The read floor: hello plus the least an authenticated read must do, and nothing else
(bench/request_cost.py).

The bearer token verified with PyJWT (HS256, as the API signs it) and its account read
by primary key with psycopg2 on a connection the worker keeps (autocommit, one
statement), the security stamp compared, the body encoded by Flask. No token cache, no
pool, no ORM, no hooks: what any service that checks a token's account on every
request pays, on Flask under the same gunicorn.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import jwt
import psycopg2
from flask import Flask, abort, jsonify, request

app = Flask(__name__)
KEY = os.environ["JWT_SECRET_KEY"]
_worker = threading.local()


def connection() -> Any:
    found = getattr(_worker, "connection", None)
    if found is None:
        found = psycopg2.connect(os.environ["DATABASE_URL"])
        found.autocommit = True
        _worker.connection = found
    return found


@app.get("/api/auth/manage/info")
def info():  # type: ignore[no-untyped-def]
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme != "Bearer":
        abort(401)
    try:
        claims = jwt.decode(token, KEY, algorithms=["HS256"])
    except jwt.InvalidTokenError:
        abort(401)
    with connection().cursor() as cursor:
        cursor.execute(
            "SELECT email, is_email_confirmed, experience_mode, map_source, security_stamp "
            "FROM users WHERE id = %s",
            (claims["sub"],),
        )
        row = cursor.fetchone()
    if row is None or row[4] != claims.get("stamp"):
        abort(401)
    return jsonify(email=row[0], isEmailConfirmed=row[1], experienceMode=row[2], mapSource=row[3])


@app.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    return jsonify(status="ok")
