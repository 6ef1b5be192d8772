"""The bad-input corpus: hostile requests generated from the OpenAPI document.

Each operation gets the generic cases (bearer tokens a careless or hostile client sends,
odd headers, stray bodies and query parameters) and one case per mutation that fits each of
its parameters and body fields (wrong types, bounds, NaN/Infinity, NUL, huge strings,
malformed GUIDs, values outside an enum, mass-assignment fields). The mutations are data
(the tables below); what a case expects is derived from the document: a rejection with a
documented status as problem+json, never a 5xx.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

METHODS = ("get", "post", "put", "patch", "delete")
HUGE = 200_000  # characters in a "huge" string: far beyond every maxLength in the document

# Statuses a rejected case may answer: 400 for bad input, 401 for a bad token, 404 for a
# path that names nothing, 413/415 for bodies. Which of them applies is per case.
Expect = frozenset[int] | None  # None: any documented status below 500


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    spec: dict[str, Any]
    document: dict[str, Any] = field(repr=False, compare=False)

    @property
    def id(self) -> str:
        return f"{self.method.upper()} {self.path}"

    @property
    def documented(self) -> set[int]:
        return {int(status) for status in self.spec["responses"] if status.isdigit()}

    @property
    def security(self) -> str:
        """ "bearer" (token required), "optional" (anonymous or bearer) or "none"."""
        security = self.spec.get("security") or []
        if not security:
            return "none"
        return "optional" if {} in security else "bearer"

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            node: Any = self.document
            for part in schema["$ref"].lstrip("#/").split("/"):
                node = node[part]
            schema = node
        return schema

    @property
    def parameters(self) -> list[dict[str, Any]]:
        item = self.document["paths"][self.path]
        return [
            self.resolve(p) for p in item.get("parameters", []) + self.spec.get("parameters", [])
        ]

    @property
    def body(self) -> tuple[str, dict[str, Any]] | None:
        """(media type, resolved schema) of the request body, if any."""
        content = self.spec.get("requestBody", {}).get("content", {})
        for media_type, entry in content.items():
            return media_type, self.resolve(entry.get("schema", {}))
        return None


def operations(document: dict[str, Any]) -> list[Operation]:
    return [
        Operation(method, path, spec, document)
        for path, item in document["paths"].items()
        for method, spec in item.items()
        if method in METHODS
    ]


@dataclass
class Case:
    """One hostile request. `path_values` may be replaced (a malformed GUID); `query` and
    `headers` are sent as given; `body` is raw bytes with `content_type`."""

    name: str
    expect: Expect
    query: list[tuple[str, str]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    content_type: str | None = None
    path_values: dict[str, str] = field(default_factory=dict)
    anonymous: bool = False
    # For mass assignment: fields whose values must not come back as sent.
    injected: dict[str, Any] = field(default_factory=dict)


# --- values -------------------------------------------------------------------------------


def types_of(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type")
    if kind is None:
        if "enum" in schema:
            return {"string"}
        return set()
    return set(kind) if isinstance(kind, list) else {kind}


def example(schema: dict[str, Any], name: str = "") -> Any:
    """A plausible valid value for a field (used to fill the other required fields)."""
    if "enum" in schema:
        return next(value for value in schema["enum"] if value is not None)
    kinds = types_of(schema) - {"null"}
    if schema.get("format") == "uuid":
        return str(uuid.uuid4())
    if schema.get("format") == "date-time":
        return "2024-01-01T00:00:00Z"
    if schema.get("format") == "email" or "email" in name.lower():
        return "someone@example.com"
    if "pattern" in schema and "A-Za-z" in schema["pattern"]:
        return "en"
    if "integer" in kinds:
        return int(schema.get("minimum", 1))
    if "number" in kinds:
        return float(schema.get("minimum", 0) if schema.get("minimum", 0) > 0 else 1.0)
    if "boolean" in kinds:
        return False
    if "array" in kinds:
        return []
    if "object" in kinds:
        return {}
    return "x" * max(int(schema.get("minLength", 1)), 1)


def minimal_body(schema: dict[str, Any], resolve: Callable[[dict], dict]) -> dict[str, Any]:
    properties = schema.get("properties", {})
    return {
        name: example(resolve(properties[name]), name)
        for name in schema.get("required", [])
        if name in properties
    }


FLOAT_OVERFLOW = object()  # written as the JSON number 1e999, which no float holds


# Wrong value for a field, by the field's schema: (case name, value, applies?).
# A value of the wrong JSON type, null for a non-nullable field, strings with NUL or far
# beyond any length limit, numbers outside the bounds or not finite, malformed GUIDs,
# dates and enum members. Each must be refused with 400.
def field_mutations(schema: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    kinds = types_of(schema)
    nullable = "null" in kinds or schema.get("nullable")
    if "string" in kinds:
        yield "wrong type: number for a string", 12345
        yield "wrong type: object for a string", {"$gt": ""}
        if "maxLength" in schema:
            yield "string one beyond maxLength", "a" * (schema["maxLength"] + 1)
        yield "huge string", "a" * HUGE
        if schema.get("format") == "uuid":
            yield "malformed GUID", "not-a-guid"
            yield "GUID with a trailing injection", f"{uuid.uuid4()}' OR '1'='1"
        if schema.get("format") == "date-time":
            yield "impossible date", "2024-13-45T25:61:00Z"
        if "enum" in schema:
            yield "value outside the enum", "NotAMember"
        against = against_pattern(schema)
        if against is not None:
            yield "text against the pattern", against
    elif "enum" in schema:
        yield "value outside the enum", "NotAMember"
        yield "wrong type: list for an enum", ["Public"]
    if kinds & {"integer", "number"}:
        yield "wrong type: string for a number", "12abc"
        yield "wrong type: boolean for a number", True
        if "minimum" in schema:
            yield "number below minimum", schema["minimum"] - 1
        if "maximum" in schema:
            yield "number above maximum", schema["maximum"] + 1
        yield "number beyond float range", FLOAT_OVERFLOW
        if "integer" in kinds:
            yield "fraction for an integer", 1.5
            yield "integer beyond 64 bits", 2**70
    if "boolean" in kinds:
        yield "wrong type: string for a boolean", "maybe"
    if "array" in kinds:
        yield "wrong type: object for an array", {"a": 1}
        yield "array of wrong items", [{"$ne": None}, 1e300, None]
    if "object" in kinds:
        yield "wrong type: array for an object", [1, 2]
    if not nullable and kinds:
        yield "null for a non-nullable field", None


# Values refused by a rule the schema cannot state, by field name: (case name, value).
# Each must be refused with 400 wherever the field is sent.
NAMED_FIELD_CASES: dict[str, list[tuple[str, Any]]] = {
    # A bring-your-own secret (decisions: Trackable codes): too short, too common, a
    # keyboard run, a reserved prefix in any case, a common word behind separators.
    "secretCode": [
        ("secret of 5 characters", "Kite5"),
        ("common password as a secret", "Password1"),
        ("keyboard run as a secret", "qwertyuiop"),
        ("digit run as a secret", "1234567890"),
        ("reserved prefix in lower case", "ln-my-own-code"),
        ("common word behind separators", "pass_word"),
    ],
}


def against_pattern(schema: dict[str, Any]) -> str | None:
    """A short text the field's pattern refuses, if one of a few candidates is."""
    if "pattern" not in schema:
        return None
    for candidate in ("\u202e<script>", " ", "A" * 3, "a-b_c!", "0"):
        if not re.search(schema["pattern"], candidate):
            return candidate
    return None


# Query and path values are text: the same ideas, as the client would type them.
def text_mutations(schema: dict[str, Any]) -> Iterator[tuple[str, str]]:
    kinds = types_of(schema)
    if kinds & {"integer", "number"}:
        yield "wrong type: word for a number", "twelve"
        yield "NaN", "NaN"
        yield "Infinity", "Infinity"
        yield "-Infinity", "-Infinity"
        yield "number beyond float range", "1e999"
        if "minimum" in schema:
            yield "number below minimum", repr(schema["minimum"] - 1)
        if "maximum" in schema:
            yield "number above maximum", repr(schema["maximum"] + 1)
        if "integer" in kinds:
            yield "fraction for an integer", "1.5"
    if "boolean" in kinds:
        yield "wrong type: word for a boolean", "perhaps"
    if "string" in kinds or not kinds:
        if "maxLength" in schema:
            yield "string one beyond maxLength", "a" * (schema["maxLength"] + 1)
        if schema.get("format") == "uuid":
            yield "malformed GUID", "not-a-guid"
        if schema.get("format") == "date-time":
            yield "impossible date", "2024-13-45T25:61:00Z"
        if "enum" in schema:
            yield "value outside the enum", "NotAMember"
        against = against_pattern(schema)
        if against is not None:
            yield "text against the pattern", against
    if free_text(schema):
        for label, value in SEARCH_SYNTAX.items():
            yield f"search syntax: {label}", value
    yield "NUL character", "a\x00b"
    yield "empty value", ""


# Text that is syntax to a search engine (SQLite FTS5, PostgreSQL tsquery and its web
# search parser, SQL LIKE): sent in every free-text query value. Any answer but a 5xx.
SEARCH_SYNTAX = {
    "lone double quote": '"',
    "unclosed phrase": '"light',
    "star": "*",
    "prefix star": "light*",
    "NEAR group": "NEAR(a b, 2)",
    "lone minus": "-",
    "runs of minus": "- " * 40 + "x",
    "boolean words": "AND OR NOT",
    "column filter": "{title}: x",
    "column colon": "title:x",
    "caret": "^x",
    "tsquery operators": "!x & y | z <-> w <2> v:*",
    "parentheses": "((x) (",
    "LIKE wildcards": "%_%",
    "quote and comment": "x'; --",
}


def free_text(schema: dict[str, Any]) -> bool:
    """A string value with no format, enum or pattern but "not blank": words."""
    kinds = types_of(schema)
    if kinds and "string" not in kinds:
        return False
    if schema.get("format") or "enum" in schema:
        return False
    return schema.get("pattern") in (None, r"\S")


# Fields a client might try to set on what it creates or edits; no request schema has them.
MASS_ASSIGNMENT = {
    "id": "00000000-0000-4000-8000-000000000001",
    "ownerUserId": "00000000-0000-4000-8000-000000000002",
    "createdByUserId": "00000000-0000-4000-8000-000000000003",
    "isSuperadmin": True,
    "isSuperAdmin": True,
    "isAdmin": True,
    "role": "Injected",
    "emailConfirmed": True,
    "securityStamp": "attacker",
    "passwordHash": "attacker",
    "createdUtc": "2000-01-01T00:00:00.000Z",
    "lastActivityUtc": "2000-01-01T00:00:00.000Z",
    "isDeleted": True,
    "version": 999999,
}


# --- generic cases: every operation -------------------------------------------------------


def forged_tokens(secret: str) -> dict[str, str]:
    """Bearer values a server must refuse: not JWTs, unsigned, signed with another key,
    expired, naming nobody, the wrong token type."""
    import jwt

    now = 1_700_000_000
    nobody = str(uuid.uuid4())
    claims = {"sub": nobody, "iat": now, "nbf": now, "exp": 4_000_000_000, "type": "access"}
    signed = jwt.encode(claims, secret, algorithm="HS256")
    other = jwt.encode({**claims, "sub": str(uuid.uuid4())}, "x" * 32, algorithm="HS256")
    return {
        "not a JWT": "not.a.jwt",
        "empty bearer": "",
        "unsigned (alg none)": jwt.encode(claims, key=None, algorithm="none"),
        "signed with another key": jwt.encode(claims, "another-key-" * 4, algorithm="HS256"),
        "expired": jwt.encode({**claims, "exp": now + 60}, secret, algorithm="HS256"),
        "unknown account": jwt.encode(claims, secret, algorithm="HS256"),
        "subject not a GUID": jwt.encode(
            {**claims, "sub": "../../admin"}, secret, algorithm="HS256"
        ),
        "refresh token as access": jwt.encode(
            {**claims, "type": "refresh"}, secret, algorithm="HS256"
        ),
        "payload swapped under a valid signature": ".".join(
            [signed.split(".")[0], other.split(".")[1], signed.split(".")[2]]
        ),
    }


def generic_cases(op: Operation, secret: str) -> Iterator[Case]:
    token_status: Expect = frozenset({401}) if op.security != "none" else None
    for name, token in forged_tokens(secret).items():
        yield Case(
            f"bearer: {name}",
            token_status,
            headers={"Authorization": f"Bearer {token}".rstrip()},
            anonymous=True,
        )
    yield Case(
        "Basic credentials instead of a bearer token",
        frozenset({401}) if op.security == "bearer" else None,
        headers={"Authorization": "Basic YWRtaW46YWRtaW4="},
        anonymous=True,
    )
    yield Case("huge header", None, headers={"X-Padding": "a" * 7000})
    yield Case("garbage X-Forwarded-For", None, headers={"X-Forwarded-For": "999.1.1.1, ::zz"})
    yield Case("garbage X-Request-ID", None, headers={"X-Request-ID": "\u00ff" * 500})
    yield Case("Accept: XML only", None, headers={"Accept": "application/xml"})
    yield Case(
        "Accept-Language garbage", None, headers={"Accept-Language": "*;q=x, zz-ZZZZZZZZZ;q=2"}
    )
    yield Case("method override header", None, headers={"X-HTTP-Method-Override": "DELETE"})
    yield Case("unknown query parameter with NUL", None, query=[("zz", "a\x00b")])
    yield Case("very long query string", None, query=[("zz", "a" * 6000)])
    yield Case("repeated unknown parameters", None, query=[("zz", str(i)) for i in range(500)])
    if op.body is None:
        yield Case(
            "stray JSON body on a route without one",
            None,
            body=b'{"isAdmin": true}',
            content_type="application/json",
        )


# --- cases from the operation's parameters and body --------------------------------------


def path_cases(op: Operation) -> Iterator[Case]:
    for parameter in op.parameters:
        if parameter["in"] != "path":
            continue
        name, schema = parameter["name"], parameter.get("schema", {})
        if schema.get("format") == "uuid":
            values = {
                "malformed GUID": "not-a-guid",
                "GUID without hyphens and too short": "0123456789abcdef",
                "GUID with SQL": "1' OR '1'='1",
            }
        else:
            values = {
                "path traversal": "..%2F..%2Fetc%2Fpasswd",
                "huge path segment": "a" * 3000,
                "percent-encoded NUL": "a%00b",
            }
        for label, value in values.items():
            yield Case(f"path {name}: {label}", frozenset({400, 404}), path_values={name: value})
        if schema.get("format") == "uuid":
            # Some reads answer an empty list for what the caller may not see.
            yield Case(f"path {name}: GUID of nothing", None, path_values={name: str(uuid.uuid4())})


def query_cases(op: Operation) -> Iterator[Case]:
    parameters = [p for p in op.parameters if p["in"] == "query"]
    if not parameters:
        return
    base = [
        (p["name"], str(example(p.get("schema", {}), p["name"])))
        for p in parameters
        if p.get("required")
    ]
    for parameter in parameters:
        name = parameter["name"]
        others = [pair for pair in base if pair[0] != name]
        for label, value in text_mutations(parameter.get("schema", {})):
            expect: Expect = frozenset({400})
            if label == "empty value" and not parameter.get("required"):
                expect = None  # an empty optional value may read as absent
            if label.startswith("search syntax"):
                expect = None  # words to some routes: a 200 is a fine answer
            yield Case(f"query {name}: {label}", expect, query=[*others, (name, value)])
        yield Case(f"query {name}: sent twice", None, query=[*base, (name, "1"), (name, "2")])


def body_cases(op: Operation) -> Iterator[Case]:
    if op.body is None:
        return
    media_type, schema = op.body
    required = bool(op.spec.get("requestBody", {}).get("required"))
    if media_type == "multipart/form-data":
        yield from upload_cases(op, schema)
        return
    bad = frozenset({400})
    json_type = "application/json"
    raw = {
        "malformed JSON": b'{"title": ',
        "JSON array instead of an object": b"[]",
        "JSON string instead of an object": b'"x"',
        "NaN literal": b'{"latitude": NaN}',
        "Infinity literal": b'{"latitude": Infinity}',
        "NUL in a key": b'{"ti\\u0000tle": "x"}',
        "deeply nested JSON": b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        "invalid UTF-8": b'{"title": "\xff\xfe"}',
        "UTF-16 with BOM": '{"title": "x"}'.encode("utf-16"),
    }
    for label, body in raw.items():
        yield Case(label, bad, body=body, content_type=json_type)
    yield Case(
        "JSON sent as text/plain",
        frozenset({415}),
        body=b'{"title": "x"}',
        content_type="text/plain",
    )
    yield Case(
        "form-encoded instead of JSON",
        frozenset({415}),
        body=b"title=x&isAdmin=true",
        content_type="application/x-www-form-urlencoded",
    )
    yield Case(
        "XML with an entity",
        frozenset({415}),
        body=b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>',
        content_type="application/xml",
    )
    yield Case(
        "empty body", frozenset({400}) if required else None, body=b"", content_type=json_type
    )
    properties = schema.get("properties", {})
    base = minimal_body(schema, op.resolve)
    for name, field_schema in properties.items():
        field_schema = op.resolve(field_schema)
        if field_schema.get("readOnly"):
            continue
        for label, value in NAMED_FIELD_CASES.get(name, []):
            body = json.dumps({**base, name: value}).encode()
            yield Case(f"body {name}: {label}", bad, body=body, content_type=json_type)
        for label, value in field_mutations(field_schema):
            if value is FLOAT_OVERFLOW:
                body = json.dumps({**base, name: "@"}).encode()
                body = body.replace(f'"{name}": "@"'.encode(), f'"{name}": 1e999'.encode())
            else:
                body = json.dumps({**base, name: value}).encode()
            yield Case(f"body {name}: {label}", bad, body=body, content_type=json_type)
    injected = {key: value for key, value in MASS_ASSIGNMENT.items() if key not in properties}
    yield Case(
        "mass assignment",
        None,
        body=json.dumps({**base, **injected}).encode(),
        content_type=json_type,
        injected=injected,
    )


def upload_cases(op: Operation, schema: dict[str, Any]) -> Iterator[Case]:
    """Multipart routes: the file missing, sent as text, urlencoded, or not multipart;
    a form of more parts than the server reads."""
    boundary = "----hostile"
    file_fields = [
        name for name, s in schema.get("properties", {}).items() if s.get("format") == "binary"
    ]
    file_field = file_fields[0] if file_fields else "file"
    multipart = f"multipart/form-data; boundary={boundary}"

    def form(*parts: str) -> bytes:
        return ("".join(parts) + f"--{boundary}--\r\n").encode()

    text_part = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"\r\n\r\n'
        "<gpx>not a file</gpx>\r\n"
    )
    cases = {
        "no parts at all": (form(), multipart),
        "file sent as a text field": (form(text_part), multipart),
        "urlencoded instead of multipart": (
            f"{file_field}=%3Cgpx%2F%3E".encode(),
            "application/x-www-form-urlencoded",
        ),
        "JSON instead of multipart": (b'{"file": "x"}', "application/json"),
        "multipart without a boundary": (form(text_part), "multipart/form-data"),
        "file part of garbage bytes": (
            form(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
                'filename="x.bin"\r\nContent-Type: application/octet-stream\r\n\r\n'
                "\x00\x01\x02 garbage\r\n"
            ),
            multipart,
        ),
        "file name with path traversal": (
            form(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
                'filename="../../../etc/passwd"\r\nContent-Type: image/jpeg\r\n\r\n'
                "not an image\r\n"
            ),
            multipart,
        ),
        "NUL in a text field": (
            form(f'--{boundary}\r\nContent-Disposition: form-data; name="zz"\r\n\r\na\x00b\r\n'),
            multipart,
        ),
    }
    for label, data in small_files_claiming_huge_images().items():
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
            'filename="x.img"\r\nContent-Type: application/octet-stream\r\n\r\n'
        ).encode()
        cases[label] = (head + data + b"\r\n" + form(), multipart)
    for label, (body, content_type) in cases.items():
        yield Case(label, frozenset({400, 415}), body=body, content_type=content_type)
    many = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="p{n}"\r\n\r\nx\r\n'
        for n in range(1_500)
    ]
    yield Case("a form of 1,500 parts", frozenset({413}), body=form(*many), content_type=multipart)


def small_files_claiming_huge_images() -> dict[str, bytes]:
    """Real files a few hundred bytes long whose headers claim far more."""
    from tests.api.images.samples import flat_png, jpeg_claiming

    return {
        "JPEG of 633 bytes claiming 7000 x 8000": jpeg_claiming(7000, 8000),
        "progressive JPEG claiming 7000 x 8000": jpeg_claiming(7000, 8000, progressive=True),
        "PNG one pixel wide, 200,000 high": flat_png(1, 200_000),
    }


def cases_for(op: Operation, secret: str) -> list[Case]:
    return [*generic_cases(op, secret), *path_cases(op), *query_cases(op), *body_cases(op)]


def url_for_case(op: Operation, case: Case, path_values: dict[str, str]) -> str:
    path = op.path
    for name, value in {**path_values, **case.path_values}.items():
        encoded = value if "%" in value else quote(value, safe="")
        path = path.replace("{" + name + "}", encoded)
    return path
