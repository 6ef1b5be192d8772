"""Times on the pages: a `<time datetime="...">` element whose text is the time in UTC,
without seconds, in the page's language (the fallback every reader gets); the pages'
script (static/pages.js) rewrites that text into the reader's own time zone and locale.
Accounts keep no time zone, so the server cannot do it."""

from __future__ import annotations

from datetime import UTC, datetime

from babel.dates import format_date, format_time, get_datetime_format
from flask_babel import get_locale
from markupsafe import Markup


def time_element(value: datetime | None, *, date_only: bool = False) -> Markup:
    """`<time>` for an instant (`date_only`: its day), or nothing for None."""
    if value is None:
        return Markup("")
    instant = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    locale = get_locale()
    day = format_date(instant, "medium", locale=locale)
    if date_only:
        text = day
    else:
        clock = format_time(instant, "short", tzinfo=UTC, locale=locale)
        text = str(get_datetime_format("medium", locale=locale)).format(clock, day) + " UTC"
    stamp = instant.isoformat(timespec="seconds").replace("+00:00", "Z")
    kind = "date" if date_only else "datetime"
    return Markup('<time datetime="{}" data-local="{}">{}</time>').format(stamp, kind, text)
