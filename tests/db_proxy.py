"""A TCP proxy in front of the PostgreSQL server that a test can cut and restore, to
play a database outage without stopping the server other suites share: `cut()` plays a
stopped server (connections reset), `black_hole()` a silent partition (connections stay
open, nothing is answered)."""

from __future__ import annotations

import contextlib
import socket
import threading


class CuttableProxy:
    """Forwards 127.0.0.1:<port> to `target`. `cut()` closes every open connection and
    closes new ones at once, as a stopped server does (clients see the connection end);
    `black_hole()` keeps every connection open and accepts new ones, but forwards nothing
    either way (what was sent is held, as a partitioned network holds it: the client's
    own kernel sees its bytes acknowledged, so only a client-side deadline notices);
    `restore()` forwards again, held bytes included."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.up = True
        self.flowing = threading.Event()
        self.flowing.set()
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
            with self.lock:
                self.open.add(client)
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        self.flowing.wait()  # a black hole: accepted, never answered
        try:
            server = socket.create_connection(self.target, timeout=5)
        except OSError:
            self._close(client)
            return
        server.settimeout(None)
        with self.lock:
            self.open.add(server)
        for source, sink in ((client, server), (server, client)):
            threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                self.flowing.wait()
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

    def black_hole(self) -> None:
        self.flowing.clear()

    def restore(self) -> None:
        self.up = True
        self.flowing.set()

    def close(self) -> None:
        self.closed = True
        self.flowing.set()
        self.cut()
        self.listener.close()
