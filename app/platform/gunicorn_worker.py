"""The gunicorn worker: sync, as the design card says, and answering the errors gunicorn
raises itself, before the app sees the request (a request line or headers over its
limits, a request it cannot parse), as problem+json like every other error of the
service, with a fixed detail that echoes nothing of the request (a request line may
carry a trackable code) and the registry's `code` for the status (app.error_codes).

gunicorn's limits stay its own (`limit_request_line` 4094 bytes, `limit_request_fields`
100, `limit_request_field_size` 8190): they bound what a worker reads before the app runs.
"""

from __future__ import annotations

import socket
from typing import Any

import orjson
from gunicorn import util
from gunicorn.workers.sync import SyncWorker

from app.error_codes import code_for_status
from app.errors import PROBLEM_JSON, status_title

DETAILS = {
    400: "The request could not be read as HTTP.",
    403: "The request was refused.",
    414: "The request line (method, path and query) is longer than this server accepts.",
    417: "The server cannot meet the request's Expect header.",
    431: "The request's headers are more or larger than this server accepts.",
    500: "The server could not handle this request.",
    501: "The request's transfer coding is not supported.",
}


def write_problem(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's `util.write_error`, in problem+json (`mesg` is left out on purpose)."""
    detail = DETAILS.get(status_int, f"{reason}.")
    body = orjson.dumps(
        {
            "type": "about:blank",
            "title": status_title(status_int),
            "status": status_int,
            "detail": detail,
            "code": code_for_status(status_int),
        }
    )
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        f"Content-Type: {PROBLEM_JSON}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


class ProblemJsonSyncWorker(SyncWorker):  # type: ignore[misc]
    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        # gunicorn's handler logs, picks the status and writes through util.write_error;
        # a sync worker serves one request at a time, so swapping the writer is safe.
        original = util.write_error
        util.write_error = write_problem
        try:
            super().handle_error(req, client, addr, exc)
        finally:
            util.write_error = original
