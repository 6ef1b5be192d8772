"""The browser tests' HTTP server closes what a response holds when the client resets
the connection: a browser cancelling map tiles once left a tile's file open, which
failed an unrelated browser test through a ResourceWarning."""

from __future__ import annotations

import gc
import socket
import struct
import sys
import time
from typing import Any
from urllib.parse import urlsplit

import requests

RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends RST


def test_a_reset_connection_leaves_no_file_open(live_server: str, monkeypatch: Any) -> None:
    tile = "/maps/tiles/0/0/0.png"
    assert requests.get(live_server + tile, timeout=30).status_code == 200  # drawn, cached
    leaks: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", leaks.append)
    address = urlsplit(live_server)
    for attempt in range(60):
        client = socket.create_connection((address.hostname, address.port))
        client.sendall(f"GET {tile} HTTP/1.1\r\nHost: {address.netloc}\r\n\r\n".encode())
        time.sleep((attempt % 6) * 0.001)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET)
        client.close()
    time.sleep(0.5)  # the server's threads finish with the reset connections
    gc.collect()
    assert [str(leak.exc_value) for leak in leaks] == []
