"""The mobile version gate (contract: Versioning 2): sync and team management refuse a
mobile build older than `androidMinimumCompatibleVersionCode` of the system status.

The app sends its build's version code in `X-Android-Version-Code`; a request without the
header (the website, third-party clients, builds from before the gate) is served.
"""

from __future__ import annotations

from flask import current_app, request

from app.error_codes import Code
from app.errors import ApiError, ValidationFailed

MOBILE_VERSION_HEADER = "X-Android-Version-Code"


class MobileVersionUnsupported(ApiError):
    code = Code.MOBILE_VERSION_UNSUPPORTED


def require_supported_mobile_version() -> None:
    """A blueprint's before_request: 400 naming the minimum for a build below it."""
    sent = request.headers.get(MOBILE_VERSION_HEADER)
    if sent is None:
        return
    if not sent.strip().isdigit():
        raise ValidationFailed(
            {MOBILE_VERSION_HEADER: ["Must be the build's integer version code."]}
        )
    config = current_app.config
    minimum = int(config["ANDROID_MIN_VERSION_CODE"])
    if int(sent) < minimum:
        raise MobileVersionUnsupported(
            f"{config['ANDROID_COMPATIBILITY_MESSAGE']} This build is {int(sent)}; sync and "
            f"team management need version code {minimum} "
            f"({config['ANDROID_MIN_DISPLAY_VERSION']}) or later.",
            minimumVersionCode=str(minimum),
            minimumDisplayVersion=config["ANDROID_MIN_DISPLAY_VERSION"],
            betaPageUrl=config["ANDROID_BETA_PAGE_URL"],
        )
