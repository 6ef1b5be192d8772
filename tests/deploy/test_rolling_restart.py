"""deploy/rolling-restart: each instance is taken out of nginx's upstreams before systemd
restarts it, and put back only once its /readyz answers; one instance at a time.
(bench/reload.py runs it under load against real gunicorn and nginx.)"""

from __future__ import annotations

import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.serving import free_port

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "rolling-restart"
UPSTREAM = """upstream location_notes_app {{
    server 127.0.0.1:{a};
    server 127.0.0.1:{b};
    keepalive 16;
}}
upstream location_notes_uploads {{
    server 127.0.0.1:{u};
    server 127.0.0.1:{a} backup;
    server 127.0.0.1:{b} backup;
}}
"""


class Ready(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/readyz" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def instances():
    """Two listeners answering /readyz, standing for the web instances."""
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), Ready) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield [server.server_port for server in servers]
    for server in servers:
        server.shutdown()
        server.server_close()


def run(tmp_path: Path, ports: list[int], uploads: int) -> tuple[subprocess.CompletedProcess, str]:
    upstream = tmp_path / "upstream.conf"
    upstream.write_text(UPSTREAM.format(a=ports[0], b=ports[1], u=uploads))
    journal = tmp_path / "journal"
    # The stand-in systemctl and nginx note the upstream file as each sees it.
    env = {
        **os.environ,
        "UPSTREAM": str(upstream),
        "RESTART": f"sh -c 'echo restart $0 >> {journal}; cat {upstream} >> {journal}'",
        "RELOAD_NGINX": f"echo reload >> {journal}",
        "READY_SECONDS": "1",
        "NGINX_SETTLE_SECONDS": "0",
        "UPLOADS_ENV": str(tmp_path / "none.env"),
    }
    result = subprocess.run(  # noqa: S603 - the shipped script
        [str(SCRIPT), *map(str, ports)], env=env, capture_output=True, text=True, timeout=60
    )
    return result, journal.read_text() if journal.exists() else ""


def test_each_instance_is_out_of_nginx_while_it_restarts_and_back_after(tmp_path, instances):
    a, b = instances
    uploads = free_port()
    result, journal = run(tmp_path, [a, b], uploads)
    assert result.returncode == 0, result.stderr
    steps = journal.split("restart ")
    assert steps[0] == "reload\n"  # nginx told before the first restart
    first, second = steps[1], steps[2]
    assert first.startswith(f"location-notes-web@{a}\n")
    assert f"server 127.0.0.1:{a} down;" in first
    assert f"server 127.0.0.1:{a} backup down;" in first
    assert f"server 127.0.0.1:{b};" in first  # the other keeps serving
    assert second.startswith(f"location-notes-web@{b}\n")
    assert f"server 127.0.0.1:{a};" in second
    assert f"server 127.0.0.1:{b} down;" in second
    assert journal.count("reload") == 4
    final = (tmp_path / "upstream.conf").read_text()
    assert final == UPSTREAM.format(a=a, b=b, u=uploads)  # every instance back


def test_an_instance_that_never_gets_ready_stays_out_and_stops_the_roll(tmp_path, instances):
    a, _ = instances
    silent = free_port()  # nothing listens: /readyz never answers
    result, journal = run(tmp_path, [silent, a], free_port())
    assert result.returncode != 0
    assert "did not answer" in result.stderr
    assert f"location-notes-web@{a}" not in journal  # the next one was not touched
    assert f"server 127.0.0.1:{silent} down;" in (tmp_path / "upstream.conf").read_text()
