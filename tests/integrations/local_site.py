"""A small website on 127.0.0.1 for outbound fetch tests: titles, errors, redirects, a huge
body, a slow answer, a non-HTML file. Optionally over TLS with a throwaway certificate."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType

TITLE_PAGE = (
    b"<!doctype html><html><head><meta charset='utf-8'>"
    b"<title>\n   Caf&eacute; &amp; Friends \xe2\x80\x94\t&#8220;Notes&#8221;\n </title>"
    b"</head><body><svg><title>not this</title></svg></body></html>"
)
HUGE_BYTES = 8 * 1024 * 1024
SLOW_SECONDS = 3.0


class Handler(BaseHTTPRequestHandler):
    server: Site

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        return

    def do_GET(self) -> None:
        self.server.seen.append((self.path, self.headers.get("Host", "")))
        self.server.headers_seen.append(
            {name.lower(): value for name, value in self.headers.items()}
        )
        path = self.path.split("?", 1)[0]
        if path.startswith("/redirect/"):
            left = int(path.rsplit("/", 1)[1])
            self.redirect(f"/redirect/{left - 1}" if left > 1 else "/title")
            return
        page = getattr(self, "page_" + path.strip("/").replace("-", "_"), None)
        if page is None:
            self.send("text/html", b"<title>Not found</title>", status=404)
            return
        page()

    def send(self, content_type: str, body: bytes, *, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, location: str, status: int = 302) -> None:
        self.send_response(status)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def page_title(self) -> None:
        self.send("text/html; charset=utf-8", TITLE_PAGE)

    def page_latin1(self) -> None:
        # Labelled ISO-8859-1, read as windows-1252 (as browsers do): 0x93/0x94 are quotes.
        self.send("text/html; charset=ISO-8859-1", b"<title>Caf\xe9 \x93Zoo\x94</title>")

    def page_meta_charset(self) -> None:
        body = b'<html><head><meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'
        self.send("text/html", body + b"<title>\xf0\xd2\xc9\xd7\xc5\xd4</title></head></html>")

    def page_long_title(self) -> None:
        self.send("text/html", b"<title>" + b"word " * 200 + b"</title>")

    def page_no_title(self) -> None:
        self.send("text/html", b"<html><head></head><body>Hello</body></html>")

    def page_missing(self) -> None:
        self.send("text/html", b"<title>Gone</title>", status=404)

    def page_broken(self) -> None:
        self.send("text/html", b"<title>Oops</title>", status=500)

    def page_loop(self) -> None:
        self.redirect("/loop")

    def page_no_location(self) -> None:
        self.send_response(302)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def page_to_private(self) -> None:
        self.redirect("http://10.0.0.7/admin")

    def page_to_metadata(self) -> None:
        self.redirect("http://169.254.169.254/latest/meta-data/")

    def page_to_ftp(self) -> None:
        self.redirect("ftp://files.example.com/")

    def page_to_named(self) -> None:
        self.redirect(f"http://intranet.example.com:{self.server.server_port}/title")

    def page_pdf(self) -> None:
        self.send("application/pdf", b"%PDF-1.4 <title>not html</title>")

    def page_huge(self) -> None:
        self.stream_huge(b"<html><head><title>Big page</title></head><body>")

    def page_huge_untitled(self) -> None:
        self.stream_huge(b"<html><head>")

    def stream_huge(self, start: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(HUGE_BYTES))
        self.end_headers()
        sent = 0
        try:
            self.wfile.write(start)
            sent = len(start)
            chunk = b"<p>" + b"x" * 65530 + b"</p>"
            while sent < HUGE_BYTES:
                self.wfile.write(chunk[: HUGE_BYTES - sent])
                sent += min(len(chunk), HUGE_BYTES - sent)
        except OSError:
            pass  # the client stopped reading, as it should
        self.server.huge_bytes_sent.append(sent)

    def page_slow(self) -> None:
        time.sleep(SLOW_SECONDS)
        self.send("text/html", b"<title>Too late</title>")

    def page_drip(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        try:
            for _ in range(int(SLOW_SECONDS / 0.1)):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass


class Site(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, context: ssl.SSLContext | None = None) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.seen: list[tuple[str, str]] = []
        self.headers_seen: list[dict[str, str]] = []  # every request's headers, names lower-case
        self.huge_bytes_sent: list[int] = []
        self.sni_names: list[str | None] = []
        if context is not None:
            context.sni_callback = lambda _sock, name, _ctx: self.sni_names.append(name)
            self.socket = context.wrap_socket(self.socket, server_side=True)
        self.scheme = "https" if context else "http"

    @property
    def port(self) -> int:
        return self.server_port

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def __enter__(self) -> Site:
        threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown()
        self.server_close()


def make_certificate(folder: Path, host: str) -> tuple[Path, Path] | None:
    """A self-signed certificate for `host` (the openssl command line), or None."""
    openssl = shutil.which("openssl")
    if openssl is None:
        return None
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(  # noqa: S603 - fixed arguments, test-only
        [
            openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", f"/CN={host}", "-addext", f"subjectAltName=DNS:{host}",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key
