"""The fingerprint of a request tagged with a `clientMutationId` (docs/contract/sync.md,
Replayed clientMutationIds): a retry carries the same tag and the same payload; the same
tag with another payload is another change that reused the tag, and is refused rather
than answered with the first record."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson


def payload_hash(payload: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the payload as canonical JSON: keys sorted, values in their JSON
    form (ids, times and enums as text). The caller chooses the fields that make the
    change (never the tag itself, the credential or the base version)."""
    encoded = orjson.dumps(
        dict(payload), option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str
    )
    return hashlib.sha256(encoded).hexdigest()
