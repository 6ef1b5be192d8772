"""Settings and helpers of the S3 image store tests (the server and bucket fixtures are in
conftest.py): where moto's server listens, the bucket's keys, and S3's own check of a
presigned URL, written out, because moto checks neither signatures nor expiry."""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qsl, quote, urlsplit

from tests.s3 import SECRET, bucket_keys, s3_endpoint

BUCKET = "images-test"
ENDPOINT = s3_endpoint()
S3_SETTINGS = {
    "IMAGE_STORAGE": "s3",
    "IMAGE_S3_BUCKET": BUCKET,
    "IMAGE_S3_PREFIX": "variants",
    "IMAGE_S3_ENDPOINT_URL": ENDPOINT,
}


def keys(client) -> list[str]:
    return bucket_keys(client, BUCKET)


class Refused(Exception):
    """What S3 would answer 403 for."""


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def check_presigned(url: str, method: str, *, now: datetime | None = None) -> dict[str, str]:
    """S3's check of a SigV4 query-signed URL (AWS SigV4 reference), written out here:
    the signature over the method, host, path and every other parameter, and the expiry.
    Raises Refused; returns the parameters."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    params = dict(pairs)
    canonical_query = "&".join(
        f"{quote(name, safe='-_.~')}={quote(value, safe='-_.~')}"
        for name, value in sorted(pairs)
        if name != "X-Amz-Signature"
    )
    if params.get("X-Amz-SignedHeaders") != "host":
        raise Refused("only the host is signed by a presigned URL of ours")
    canonical = "\n".join(
        [method, parts.path, canonical_query, f"host:{parts.netloc}\n", "host", "UNSIGNED-PAYLOAD"]
    )
    _, scope = params["X-Amz-Credential"].split("/", 1)
    day, region, service, _ = scope.split("/")
    to_sign = "\n".join(
        [
            "AWS4-HMAC-SHA256",
            params["X-Amz-Date"],
            scope,
            hashlib.sha256(canonical.encode()).hexdigest(),
        ]
    )
    key = _hmac(_hmac(_hmac(_hmac(f"AWS4{SECRET}".encode(), day), region), service), "aws4_request")
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, params.get("X-Amz-Signature", "")):
        raise Refused("SignatureDoesNotMatch")
    signed = datetime.strptime(params["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    if (now or datetime.now(UTC)) > signed + timedelta(seconds=int(params["X-Amz-Expires"])):
        raise Refused("Request has expired")
    return params
