"""The dealer port: the service's command stream and dealer inputs on a local socket.

``shoe-ctl run --dealer-socket PATH`` offers a Unix stream socket at ``PATH`` (mode 0600: the
stream names scrambled cards and, at showdown, tabled hands). It is how something outside the
service process — the simulated dealer of ``shoe-ctl hil crash``, a test, a bench console — sees
what the dealer is told and reports what the dealer does, with no display or browser in between.
One client at a time (a new connection replaces the old one). The protocol, one JSON object per
line in both directions, each in the journal's codec (:mod:`shoe_ctl.service.codec`):

- service -> client: every command the controller hands to its sinks, in order
  (``Instruction``, ``DisplayUpdate``, ``Alert``, ``ShoeCommand``). A client that connects first
  gets the current ``DisplayUpdate`` and then the current ``Instruction`` (what the dealer sees
  when looking up: the table, then the signal), so a client that reconnects, or a service that
  restarted, needs no other hand-shake.
- client -> service: ``DealerInput`` objects, posted to the controller's queue as if touched on
  the display. A line that is not a ``DealerInput`` is answered with ``{"error": "..."}`` and
  changes nothing.

Nothing is buffered for a client that is not there: commands sent while no client is connected
are gone (the next client gets the current state), and inputs are taken only while connected.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shoe_ctl.events import Command, DealerInput, DisplayUpdate, Instruction
from shoe_ctl.lifecycle import Closeable
from shoe_ctl.service import codec

log = logging.getLogger(__name__)

__all__ = ["DealerPort"]

_ACCEPT = object()
_STOP = object()


class DealerPort(Closeable):
    """A sink that streams the commands to a local client and posts its dealer inputs.

    :param path: the Unix socket's path (an existing socket file there is replaced).
    :param post: the controller's thread-safe ``post(event)``.
    :raises OSError: the socket cannot be bound (folder missing, not writable).

    Sink interface: :meth:`handle` only queues (never blocks the controller); :meth:`close` is
    idempotent and removes the socket file. The socket is bound at once, but connections are
    accepted only after :meth:`start`: call it after ``Controller.start()``, so the first client
    gets the service's initial display and signal in that order.
    """

    def __init__(self, path: str | os.PathLike[str], post: Callable[[Any], Any]) -> None:
        self.path = Path(path)
        self.post = post
        self.inputs = 0
        self.rejected = 0
        self._out: queue.Queue[Any] = queue.Queue()
        self._conn: socket.socket | None = None
        self._pending: socket.socket | None = None
        self._lock = threading.Lock()
        super().__init__(self._lock)
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            self._listener.bind(str(self.path))
        finally:
            os.umask(old)
        self._listener.listen(1)
        self._writer = threading.Thread(target=self._write_loop, name="dealer-port-out", daemon=True)
        self._acceptor = threading.Thread(target=self._accept_loop, name="dealer-port-in", daemon=True)
        self._writer.start()

    def start(self) -> DealerPort:
        """Accept clients from now on (returns self)."""
        if not self._acceptor.is_alive() and not self._closed:
            self._acceptor.start()
        return self

    # ------------------------------------------------------------------ sink

    def handle(self, command: Command) -> None:
        """Queue one command for the client (any command type; never blocks)."""
        self._out.put(command)

    def _close(self) -> None:
        """``close()``: stop both threads, close the connection and remove the socket file."""
        self._out.put(_STOP)
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            for c in (self._conn, self._pending):
                if c is not None:
                    try:
                        c.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    c.close()
        self._writer.join(5)
        if self._acceptor.is_alive():
            self._acceptor.join(5)
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    # ------------------------------------------------------------------ threads

    def _write_loop(self) -> None:
        display: DisplayUpdate | None = None
        instruction: Instruction | None = None
        while True:
            item = self._out.get()
            if item is _STOP:
                return
            if item is _ACCEPT:
                with self._lock:
                    conn, self._pending = self._pending, None
                    old, self._conn = self._conn, conn
                if old is not None:
                    old.close()
                for cmd in (display, instruction):
                    if cmd is not None:
                        self._send(cmd)
                continue
            if isinstance(item, DisplayUpdate):
                display = item
            elif isinstance(item, Instruction):
                instruction = item
            self._send(item)

    def _send(self, cmd: Command) -> None:
        conn = self._conn
        if conn is None:
            return
        try:
            conn.sendall(codec.dumps(cmd).encode() + b"\n")
        except OSError:
            with self._lock:
                if self._conn is conn:
                    self._conn = None
            conn.close()

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                self._pending = conn
            self._out.put(_ACCEPT)
            threading.Thread(target=self._read_loop, args=(conn,), name="dealer-port-read", daemon=True).start()

    def _read_loop(self, conn: socket.socket) -> None:
        buf = b""
        while True:
            try:
                chunk = conn.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.strip():
                    self._on_line(conn, line)

    def _on_line(self, conn: socket.socket, line: bytes) -> None:
        try:
            item = codec.loads(line, "dealer port")
            if not isinstance(item, DealerInput):
                raise codec.CodecError(f"dealer port: expected a DealerInput, got {type(item).__name__}")
        except codec.CodecError as exc:
            self.rejected += 1
            log.warning("%s", exc)
            try:
                conn.sendall(json.dumps({"error": str(exc)}).encode() + b"\n")
            except OSError:
                pass
            return
        self.inputs += 1
        self.post(item)
