"""A TCP proxy in front of the PostgreSQL server that a test can cut and restore, to
play a database outage without stopping the server other suites share."""

from __future__ import annotations

import contextlib
import socket
import threading


class CuttableProxy:
    """Forwards 127.0.0.1:<port> to `target`. `cut()` closes every open connection and
    closes new ones at once, as a stopped server does (clients see the connection end);
    `restore()` forwards again."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.up = True
        self.closed = False
        self.open: set[socket.socket] = set()
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.up:
                client.close()
                continue
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self.lock:
                self.open |= {client, server}
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            self._close(source, sink)

    def _close(self, *sockets: socket.socket) -> None:
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()
            with self.lock:
                self.open.discard(sock)

    def cut(self) -> None:
        self.up = False
        with self.lock:
            sockets = list(self.open)
        self._close(*sockets)

    def restore(self) -> None:
        self.up = True

    def close(self) -> None:
        self.closed = True
        self.cut()
        self.listener.close()
