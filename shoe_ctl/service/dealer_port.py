"""The dealer port (``--dealer-socket PATH``): a Unix socket (mode 0600, one client at a time) on
which the service streams every command it hands its sinks and takes dealer inputs, one JSON line
each in the journal's codec, checked as the display checks them. docs/recovery.md (the dealer
port) and docs/security.md, *Floods and connections*.
With a users file an input line may carry ``"credential": {"user", "pin"}`` for an input only
some roles may make (docs/compliance.md, "People and roles").
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import queue
import socket
import stat
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shoe_ctl.events import Command, DealerInput, DisplayUpdate, Instruction
from shoe_ctl.input_spec import check_input
from shoe_ctl.lifecycle import Closeable
from shoe_ctl.service import codec
from shoe_ctl.service.ratelimit import RateLimiter
from shoe_ctl.users import Authenticator, AuthError, UserFileError, parse_credential, signed
from shoe_ctl.utf8 import Reports, encode_replacing

log = logging.getLogger(__name__)

__all__ = ["DealerPort", "DealerPortError"]

_ACCEPT = object()
_REPORTS = Reports(log)
"""The warnings of :func:`_line` (one a minute)."""


def _line(cmd: Command) -> bytes | None:
    """``cmd`` as the client reads it: the journal codec's text and a newline. A text UTF-8 cannot
    encode (a lone surrogate) is written U+FFFD, with a warning; a command the codec cannot encode
    at all is not sent (a warning): the writer thread goes on either way."""
    try:
        return codec.dumps(cmd).encode() + b"\n"
    except codec.CodecError as exc:
        try:
            data, _count = encode_replacing(codec.TEXT.encode(codec.encode(cmd)))
        except codec.CodecError:
            _REPORTS("dealer port", f"dealer port: {exc}; not sent")
            return None
        _REPORTS("dealer port", f"dealer port: {exc}: sent with each such code point written U+FFFD")
        return data + b"\n"
_STOP = object()

SEND_TIMEOUT_S = 5.0
"""A client that takes no line for this long is disconnected (it stopped reading)."""
MAX_QUEUED = 4096
"""Commands waiting for the client at most; beyond, the client is disconnected."""
MAX_LINE = 64 * 1024
"""Longest input line (bytes); a longer one is refused whole."""
INPUTS_PER_S = 50.0
INPUTS_BURST = 100
"""Inputs posted per second (sustained, burst); beyond, each is answered with an error line."""


def peer_source(conn: socket.socket) -> str:
    """The ``DealerInput.source`` of a dealer-port client: ``dealer-port:uid=U,pid=P`` from the
    kernel's peer credentials (``SO_PEERCRED``), ``dealer-port`` where they cannot be had."""
    try:
        pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                             struct.calcsize("3i")))
    except (OSError, AttributeError, struct.error):
        return "dealer-port"
    return f"dealer-port:uid={uid},pid={pid}"


def _hang_up(conn: socket.socket) -> None:
    """Close ``conn`` so that its client reads the end and its reader thread's ``recv`` returns
    (a plain ``close`` from another thread leaves the socket open while that ``recv`` waits)."""
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()


class DealerPortError(OSError):
    """The dealer socket cannot be had; the message names the path, the reason and the fix."""


def _listen(path: Path) -> socket.socket:
    """A listening Unix socket at ``path`` (mode 0600). Only a socket nobody listens on (left by a
    killed service) is replaced: a file, a folder or a live socket of another program is left as
    it is.

    :raises DealerPortError: naming ``path``: it is not a socket, another program listens on it,
        its folder is missing, or it is too long for a Unix socket.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise DealerPortError(f"dealer socket {path}: {exc.strerror or exc}") from None
    else:
        if not stat.S_ISSOCK(st.st_mode):
            raise DealerPortError(f"dealer socket {path}: exists and is not a socket; refusing to replace it "
                                  "(give a new path, e.g. /run/shoe-ctl/dealer.sock)")
        if _listening(path):
            raise DealerPortError(f"dealer socket {path}: in use by another program (it accepts connections); "
                                  "stop it or give another path")
        path.unlink()  # a socket left by a killed service: nobody listens
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(str(path))
    except OSError as exc:
        listener.close()
        raise DealerPortError(f"dealer socket {path}: cannot create it: {exc.strerror or exc}"
                              + (" (a Unix socket path is at most 107 bytes)" if len(os.fsencode(path)) > 107 else "")
                              ) from None
    finally:
        os.umask(old)
    listener.listen(1)
    return listener


def _listening(path: Path) -> bool:
    """Whether a program listens on the Unix socket at ``path``: from ``/proc/net/unix`` (Linux),
    which lists bound sockets without connecting (a connection would be taken by a running
    service as its new dealer client, dropping the one it has); else by trying to connect."""
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as fh:
            bound = {line.split(None, 7)[7].rstrip("\n") for line in fh if len(line.split(None, 7)) == 8}
    except OSError:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
        except OSError:
            return False
        finally:
            probe.close()
        return True
    return str(path.absolute()) in bound or str(path) in bound


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
        self.authenticator: Authenticator | None = None
        """Set by the table with a users file: a line's ``"credential"`` (``{"user", "pin"}``) is
        checked and the input signed with that user (:class:`shoe_ctl.users.Authenticator`)."""
        self.inputs = 0
        self.rejected = 0
        self._out: queue.Queue[Any] = queue.Queue(MAX_QUEUED)
        self.send_timeout_s = SEND_TIMEOUT_S
        self.dropped = 0
        self._latest: dict[type, Command] = {}  # the newest DisplayUpdate / Instruction handed
        self._overflowed = False
        self._rate = RateLimiter(INPUTS_PER_S, INPUTS_BURST, "dealer port inputs")
        self._conn: socket.socket | None = None
        self._lock = threading.Lock()
        super().__init__(self._lock)
        self._listener = _listen(self.path)
        self._inode = os.stat(self.path).st_ino
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
        """Queue one command for the client (any command type; never blocks). When
        :data:`MAX_QUEUED` commands wait already, the client is disconnected instead."""
        if isinstance(command, DisplayUpdate | Instruction):
            with self._lock:
                self._latest[type(command)] = command
        try:
            self._out.put_nowait(command)
        except queue.Full:
            self._drop_slow_client(f"{MAX_QUEUED} commands waiting")

    def _drop_slow_client(self, why: str) -> None:
        """Disconnect the client that stopped reading (its writes then fail at once, so the queue
        drains); the next client gets the newest display and instruction."""
        with self._lock:
            conn, self._overflowed = self._conn, True
        self.dropped += 1
        if conn is not None:
            log.warning("dealer port: the client is not reading (%s); disconnected", why)
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _close(self) -> None:
        """``close()``: stop both threads, close the connection and remove the socket file."""
        self._out.put(_STOP)
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            _hang_up(conn)
        self._writer.join(5)
        if self._acceptor.is_alive():
            self._acceptor.join(5)
        try:
            if os.stat(self.path).st_ino == self._inode:  # still ours: not replaced by another program's
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
                with self._lock:
                    last, self._conn = self._conn, None
                if last is not None:  # a client accepted while the port closed
                    _hang_up(last)
                return
            if isinstance(item, tuple) and item[0] is _ACCEPT:
                with self._lock:
                    old, self._conn = self._conn, item[1]
                if old is not None:  # the client before: its end reads the close, its reader ends
                    _hang_up(old)
                with self._lock:
                    if self._overflowed:  # commands were dropped: the newest handed is the truth
                        self._overflowed = False
                        d, i = self._latest.get(DisplayUpdate), self._latest.get(Instruction)
                        display = d if isinstance(d, DisplayUpdate) else display
                        instruction = i if isinstance(i, Instruction) else instruction
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
        line = _line(cmd)
        if line is None:
            return
        try:
            conn.sendall(line)
        except OSError as exc:
            if isinstance(exc, BlockingIOError | TimeoutError):  # SO_SNDTIMEO ran out
                self.dropped += 1
                log.warning("dealer port: the client took no data for %g s; disconnected", self.send_timeout_s)
            with self._lock:
                if self._conn is conn:
                    self._conn = None
            _hang_up(conn)

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
            self._limit_sends(conn)
            self._out.put((_ACCEPT, conn))  # the connection goes with its turn: none is overwritten
            threading.Thread(target=self._read_loop, args=(conn,), name="dealer-port-read", daemon=True).start()

    def _limit_sends(self, conn: socket.socket) -> None:
        """A send to ``conn`` waits at most :attr:`send_timeout_s` (the kernel's ``SO_SNDTIMEO``:
        the socket stays blocking for the reader thread)."""
        whole = int(self.send_timeout_s)
        micro = int((self.send_timeout_s - whole) * 1_000_000)
        for layout in ("ll", "qq"):  # struct timeval: native longs, or 64-bit time on 32-bit Linux
            try:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack(layout, whole, micro))
                return
            except OSError:
                continue
        log.warning("dealer port: cannot bound the send time; a client that stops reading holds the writer")

    def _read_loop(self, conn: socket.socket) -> None:
        try:
            self._read_lines(conn)
        except Exception:  # noqa: BLE001 - never a silent death: say so and drop the client
            log.exception("dealer port: reading the client failed; disconnected")
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _read_lines(self, conn: socket.socket) -> None:
        buf = b""
        skipping = False  # inside a line that was too long: drop up to its end
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
                if skipping:
                    skipping = False
                elif line.strip():
                    self._on_line(conn, line)
            if len(buf) > MAX_LINE:
                if not skipping:
                    self._refuse(conn, f"dealer port: a line longer than {MAX_LINE} bytes; refused")
                buf, skipping = b"", True

    def _refuse(self, conn: socket.socket, why: str, *, quiet: bool = False) -> None:
        """Answer ``{"error": why}`` (counted in :attr:`rejected`; logged unless ``quiet``)."""
        self.rejected += 1
        if not quiet:
            log.warning("%s", why)
        try:
            conn.sendall(json.dumps({"error": why}).encode() + b"\n")
        except OSError:
            pass

    def _credential(self, line: bytes) -> tuple[bytes, Any]:
        """The line without its ``"credential"`` member (``{"user", "pin"}``), and that member
        (None when absent or the line is not a JSON object: the codec then says what is wrong)."""
        if b'"credential"' not in line:
            return line, None
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            return line, None
        if not isinstance(obj, dict) or "credential" not in obj:
            return line, None
        cred = obj.pop("credential")
        return json.dumps(obj).encode(), cred

    def _on_line(self, conn: socket.socket, line: bytes) -> None:
        line, credential = self._credential(line)
        try:
            item = codec.loads(line, "dealer port")
            if not isinstance(item, DealerInput):
                raise codec.CodecError(f"dealer port: expected a DealerInput, got {type(item).__name__}")
        except codec.CodecError as exc:
            self._refuse(conn, str(exc))
            return
        except RecursionError:
            self._refuse(conn, "dealer port: the line is nested too deeply; refused")
            return
        try:
            check_input(item.action, item.seat, item.args)
        except ValueError as exc:  # the journal must keep what is posted; the machine gets only what the display would post
            self._refuse(conn, f"dealer port: {exc}; refused")
            return
        if not self._rate.allow("the dealer port client"):  # logged once per flood by the limiter
            self._refuse(conn, f"dealer port: too many inputs (at most {INPUTS_PER_S:g} per second); "
                         "this one was not taken", quiet=True)
            return
        # never what the client claims: where it came from, and what the controller's gate did
        item = dataclasses.replace(item, source=peer_source(conn), gate="")
        if credential is not None and self.authenticator is not None:
            try:
                name, pin = parse_credential(credential)
                item = signed(item, self.authenticator.authenticate(name, pin, "dealer-port"))
            except (ValueError, AuthError, UserFileError) as exc:
                self._refuse(conn, f"dealer port: credential refused: {exc}; the input was not taken")
                return
        if self.post(item) is False:
            self._refuse(conn, "dealer port: the table is busy with earlier inputs; this one was not taken")
            return
        self.inputs += 1
