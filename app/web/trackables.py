"""The website entry route GET /trackable/{code} (contract: Trackables: lookup and active
sessions; Versioning item 4): the one shareable URL for a public code, a short secret code
or a long QR token, whatever their lengths.

- A public code the visitor may see: 302 to its public page `/{lang}/trackables/{code}`.
- A secret code or QR token: opens the access session (cookie) and 302 to the active
  landing `/{lang}/trackables/active/{trackableId}`.
- Anything else: a small HTML 404 page offering a lookup form; it counts against the
  address's guess budget, and over it the answer is an HTML 429 with Retry-After.
- The form POSTs the typed code to /trackable (form field `code`), which answers as
  above (a match: 303 to its page), so a typed secret stays out of URLs, the browser
  history and access logs. An empty form is a 400 page with the form again, not a miss.

The code is a secret in most of these URLs: no page echoes it, nothing is cached, and the
pages send no Referer onward (the access log redacts it: app.platform.logs).
"""

from __future__ import annotations

from flask import Blueprint, Response, current_app, redirect, request
from markupsafe import escape
from werkzeug.wrappers import Response as BaseResponse

from app.auth import current_viewer
from app.extensions import client_ip, db
from app.services import trackables

entry = Blueprint("trackable_entry", __name__)

PAGE = """<!doctype html>
<html lang="{lang}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>{title}</title></head>
<body>
<h1>{title}</h1>
{body}
</body>
</html>
"""

LOOKUP_FORM = """<form method="post" action="/trackable">
<label for="code">Code</label>
<input id="code" name="code" type="text" autocomplete="off" autocapitalize="characters" required>
<button type="submit">Look up</button>
</form>"""


def _page(status: int, title: str, body: str, lang: str) -> Response:
    html = PAGE.format(lang=escape(lang), title=escape(title), body=body)
    return Response(html, status=status, mimetype="text/html")


def _private(response: BaseResponse) -> BaseResponse:
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


# `path`, not `string`: no code holds a slash, but whatever a visitor pasted after
# /trackable/ (`</script>` included) gets this route's miss page, not an API problem.
@entry.get("/trackable/<path:code>")
def open_trackable(code: str) -> BaseResponse:
    """Route a public code, secret code or QR token to its page (see the module)."""
    return _open(code, redirect_status=302)


@entry.post("/trackable")
def open_typed_trackable() -> BaseResponse:
    """The miss page's form: the typed code, routed as by GET /trackable/{code}."""
    code = request.form.get("code", "")
    if not code.strip():
        lang = trackables.site_language(request.accept_languages)
        body = "<p>Enter a code.</p>\n" + LOOKUP_FORM
        return _private(_page(400, "Enter a code", body, lang))
    return _open(code, redirect_status=303)  # after a POST, the page is fetched with GET


def _open(code: str, *, redirect_status: int) -> BaseResponse:
    lang = trackables.site_language(request.accept_languages)
    cookie = trackables.AccessCookie.from_config(current_app.config)
    client_id = cookie.client_id(request.cookies) or trackables.new_client_id()
    viewer = current_viewer()
    try:
        result = trackables.lookup_code(
            viewer,
            code,
            lang=lang,
            client_id=client_id,
            guess_client=trackables.guess_key(client_ip(), current_app.config, viewer.user),
            config=current_app.config,
        )
    except trackables.GuessBudgetExceeded as refused:
        return _private(_too_many(refused, lang))
    db.session.commit()
    if result.redirect_url is None:
        return _private(_not_found(result, lang))
    response = redirect(result.redirect_url, code=redirect_status)
    if result.uses_secret_access:
        response.set_cookie(cookie.name, cookie.sign(client_id), **cookie.options())
    return _private(response)


def _not_found(result: trackables.LookupResult, lang: str) -> Response:
    body = f"<p>{escape(result.error or '')}</p>"
    if result.help_url:
        body += f'<p><a href="{escape(result.help_url)}">Read more about such codes</a></p>'
    body += "<p>Check the code and enter it again:</p>\n" + LOOKUP_FORM
    return _page(404, "Trackable not found", body, lang)


def _too_many(refused: trackables.GuessBudgetExceeded, lang: str) -> Response:
    body = f"<p>{escape(refused.state)}</p>\n<p>Please try again in {escape(refused.wait)}.</p>"
    if refused.hint:
        body += f"\n<p>{escape(refused.hint)}</p>"
    response = _page(429, "Too many requests", body, lang)
    response.headers["Retry-After"] = str(refused.retry_after)
    return response
