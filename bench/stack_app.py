"""The design card's stack floor: the authenticated read written the way its libraries'
documentation shows, with none of the service's code (bench/request_cost.py).

Flask, a flask-smorest blueprint with a marshmallow response schema, flask-jwt-extended's
`@jwt_required()` and its user loader, and Flask-SQLAlchemy reading the token's account
by primary key on every request (the security stamp compared, as the API does). What
the stack itself costs a request, before anything the service adds (request ids,
metrics, security and rate-limit headers, problem details, the read replica, the
statement guard).
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from flask import Flask, jsonify
from flask_jwt_extended import JWTManager, current_user, jwt_required
from flask_smorest import Api, Blueprint
from flask_sqlalchemy import SQLAlchemy
from marshmallow import Schema, fields
from sqlalchemy import Boolean, String, Uuid
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


db = SQLAlchemy(model_class=Base)
jwt = JWTManager()


class Account(db.Model):  # type: ignore[name-defined,misc]
    __tablename__ = "users"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    email: Mapped[str] = mapped_column(String)
    is_email_confirmed: Mapped[bool] = mapped_column(Boolean)
    experience_mode: Mapped[str | None] = mapped_column(String)
    map_source: Mapped[str | None] = mapped_column(String)
    security_stamp: Mapped[str] = mapped_column(String)


class InfoSchema(Schema):
    email = fields.String()
    is_email_confirmed = fields.Boolean(data_key="isEmailConfirmed")
    experience_mode = fields.String(data_key="experienceMode", allow_none=True)
    map_source = fields.String(data_key="mapSource", allow_none=True)


@jwt.user_lookup_loader
def load_account(header: dict[str, Any], payload: dict[str, Any]) -> Account | None:
    return db.session.get(Account, uuid.UUID(payload["sub"]))


@jwt.token_in_blocklist_loader
def revoked(header: dict[str, Any], payload: dict[str, Any]) -> bool:
    account = db.session.get(Account, uuid.UUID(payload["sub"]))
    return account is None or payload.get("stamp") != account.security_stamp


blp = Blueprint("manage", __name__)


@blp.route("/api/auth/manage/info")
@blp.response(200, InfoSchema)
@jwt_required()
def info() -> Account:
    return current_user  # type: ignore[no-any-return]


app = Flask(__name__)
app.config.update(
    SQLALCHEMY_DATABASE_URI=os.environ["DATABASE_URL"],
    JWT_SECRET_KEY=os.environ["JWT_SECRET_KEY"],
    API_TITLE="stack floor",
    API_VERSION="1",
    OPENAPI_VERSION="3.0.3",
)
db.init_app(app)
jwt.init_app(app)
Api(app).register_blueprint(blp)


@app.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    return jsonify(status="ok")
