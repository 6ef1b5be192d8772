"""Peers that hang, for the tests of deadlines (outbound fetches, webhook deliveries, the
worker's lanes): a black hole that accepts connections and never answers, and a trickler
that answers one byte at a time. Both listen on 127.0.0.1 in a thread of the test."""

from __future__ import annotations

import socket
import threading


class BlackHole:
    """Accepts connections and reads what is sent, never answers: a receiver that hangs.
    `connections` counts the accepted ones. Usable in another process too (its port)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.held: list[socket.socket] = []
        self._closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(connection)  # kept open, never written to
            self.connections += 1

    def close(self) -> None:
        self._closed.set()
        self.listener.close()
        for connection in self.held:
            connection.close()


class Trickler(BlackHole):
    """Answers every request with a 200 sent one byte every `interval` seconds."""

    ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        super().__init__()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(connection)
            self.connections += 1
            threading.Thread(target=self._drip, args=(connection,), daemon=True).start()

    def _drip(self, connection: socket.socket) -> None:
        try:
            for byte in self.ANSWER:
                if self._closed.wait(self.interval):
                    return
                connection.sendall(bytes([byte]))
        except OSError:
            pass  # the client hung up: what the deadline should do
