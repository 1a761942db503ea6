"""The shoe bridge on the Pi: the open firmware (``drivers/shoe_fw``) run as a shoe on a pty.

:class:`Bridge` owns the reader and the card-out beam and exposes the shoe on a pseudo-terminal
behind a stable symlink (``/run/shoe-ctl/shoe`` by default), which ``shoe-ctl run`` opens as
its shoe like any serial device. It keeps what a shoe keeps in non-volatile memory in a state
file (:class:`StateFile`: ``next_seq``, the counters and the unacked events), written
atomically (a temporary file, fsync, rename, fsync of the folder) before any event goes out,
so a restart of ``shoe-ctl`` loses nothing (the bridge resends what is unacked) and a restart
of the bridge is a shoe restart with counts and its buffer kept (docs/protocol.md section 12,
capabilities ``persistent-counters`` and ``keeps-buffer``). Its pairing secret is a file of its
own (mode 0600); ``--pairing`` starts it in pairing mode for ``shoe-ctl pair``. The live deck
maps are read from the table's deck folder and read again when the folder changes.
docs/build-a-shoe.md, "The bridge on the Pi".
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import stat
import termios
import threading
import time
import tty
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from drivers.reader_port import ReaderModule
from drivers.shoe_fw import deckmap
from drivers.shoe_fw.core import ShoeCore
from drivers.shoe_fw.firmware import Firmware
from drivers.shoe_fw.loop import turn
from shoe_ctl.lifecycle import Closeable, join_thread

log = logging.getLogger(__name__)

STATE_FORMAT = "shoe-ctl bridge state 1"
DEFAULT_STATE = Path("/var/lib/shoe-ctl/bridge")
DEFAULT_LINK = Path("/run/shoe-ctl/shoe")
DEFAULT_DECKS = Path("/var/lib/shoe-ctl/decks")
FIRMWARE = "shoe_fw-bridge-1.0"


class BridgeError(Exception):
    """A bridge that cannot start: a state or secret file that cannot be used, a link path
    taken; the message names the file and what to do."""


def _write_atomically(path: Path, data: bytes, mode: int = 0o600) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


class StateFile:
    """The bridge's kept state: ``state.json`` in ``folder`` (made 0700 if missing).

    The file: ``{"format": "shoe-ctl bridge state 1", "next_seq", "boot_count", "card_total",
    "epoch", "dispense", "held": [[seq, type, payload hex], ...]}``.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / "state.json"
        self.saves = 0

    def load(self) -> tuple[tuple[int, int, int, int, int], list[tuple[int, int, bytes]]] | None:
        """``(kept, held)``, or None when there is no state yet (a new shoe).

        :raises BridgeError: a file that is not a bridge state (names it, and the way out: a
            shoe whose sequence goes back is reported by the host as a sequence reset).
        """
        try:
            text = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise BridgeError(f"{self.path}: cannot read the bridge state ({exc.strerror or exc})") from None
        try:
            doc = json.loads(text)
            if doc.get("format") != STATE_FORMAT:
                raise ValueError(f"format {doc.get('format')!r}, expected {STATE_FORMAT!r}")
            kept = tuple(int(doc[k]) for k in ("next_seq", "boot_count", "card_total", "epoch", "dispense"))
            held = [(int(s), int(t), bytes.fromhex(h)) for s, t, h in doc["held"]]
            if kept[0] < 1 or any(s < 1 or s >= kept[0] for s, _, _ in held):
                raise ValueError("sequence numbers out of order")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BridgeError(f"{self.path}: not a bridge state ({exc}); the shoe's sequence numbers are in it: "
                              "restore it from a backup, or move it away to start as a new shoe (the table then "
                              "reports a sequence reset)") from None
        return kept, held  # type: ignore[return-value]

    def save(self, kept: tuple[int, int, int, int, int], held: list[tuple[int, int, bytes]] | None) -> None:
        """Write the state atomically and durably (returns once it is on disk)."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        doc = {"format": STATE_FORMAT, "next_seq": kept[0], "boot_count": kept[1], "card_total": kept[2],
               "epoch": kept[3], "dispense": kept[4],
               "held": [[s, t, p.hex()] for s, t, p in (held or [])]}
        _write_atomically(self.path, json.dumps(doc, separators=(",", ":")).encode())
        self.saves += 1


class SecretFile:
    """The bridge's pairing secret: ``secret`` in the state folder, 64 hex digits, mode 0600."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / "secret"

    def load(self) -> bytes | None:
        """The secret, or None (never paired).

        :raises BridgeError: a file others may read, or not a secret.
        """
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        except OSError as exc:  # a path through a file, a folder it may not enter
            raise BridgeError(f"{self.path}: cannot read the shoe's secret ({exc.strerror or exc})") from None
        if stat.S_IMODE(st.st_mode) & 0o077:
            raise BridgeError(f"{self.path} is mode {stat.S_IMODE(st.st_mode):04o}: others may read the shoe's "
                              f"secret; chmod 0600 it and pair again (shoe-ctl pair) to rotate it")
        try:
            secret = bytes.fromhex(self.path.read_text().strip())
        except (OSError, ValueError) as exc:
            raise BridgeError(f"{self.path}: not a shoe secret ({exc}); pair the shoe again") from None
        if len(secret) != 32:
            raise BridgeError(f"{self.path}: a secret is 32 bytes, this one {len(secret)}; pair the shoe again")
        return secret

    def save(self, secret: bytes) -> None:
        """Keep a new secret (a pairing or a rotation)."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _write_atomically(self.path, secret.hex().encode() + b"\n")

    def check_writable(self) -> None:
        """Make the folder (0700) if missing and prove a secret can be written there, before the
        shoe takes one it could not keep.

        :raises BridgeError: naming the folder and why.
        """
        probe = self.path.with_name(self.path.name + ".probe")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise BridgeError(f"{self.path.parent}: cannot keep the shoe's secret there "
                              f"({exc.strerror or exc})") from None


class PtyPort:
    """The shoe's end of a pseudo-terminal in raw mode, behind the symlink ``link``, for
    :func:`drivers.shoe_fw.loop.turn`: ``in_waiting``, ``read``, ``write`` that never blocks (a
    frame nobody reads is dropped and counted: the shoe resends events)."""

    def __init__(self, link: Path) -> None:
        self.link = Path(link)
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)
        attrs = termios.tcgetattr(self._slave)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(self._slave, termios.TCSANOW, attrs)
        os.set_blocking(self.master, False)
        self.name = os.ttyname(self._slave)
        try:
            self._place_link()
        except (BridgeError, OSError) as exc:
            os.close(self.master)
            os.close(self._slave)
            if isinstance(exc, BridgeError):
                raise
            raise BridgeError(f"--link {self.link}: cannot put the shoe's symlink there ({exc.strerror or exc}"
                              f"{': ' + str(exc.filename) if exc.filename else ''}); the service user must be "
                              f"able to write {self.link.parent} (the unit's RuntimeDirectory makes "
                              "/run/shoe-ctl)") from None
        os.close(self._slave)  # held open, the host would see another holder of its port (port-shared)
        self._slave = -1
        self.dropped = 0

    def _place_link(self) -> None:
        """Point :attr:`link` at the pty (its folder made if missing), replacing an old symlink
        atomically.

        :raises BridgeError: the path is taken by something that is not a symlink.
        :raises OSError: the folder cannot be made or written.
        """
        self.link.parent.mkdir(parents=True, exist_ok=True)
        if self.link.is_symlink() or self.link.exists():
            if not self.link.is_symlink():
                raise BridgeError(f"{self.link} exists and is not a symlink: choose another --link")
            self.link.unlink()
        tmp = self.link.with_name(self.link.name + ".new")
        if tmp.is_symlink():
            tmp.unlink()
        os.symlink(self.name, tmp)
        os.replace(tmp, self.link)

    @property
    def in_waiting(self) -> int:
        buf = bytearray(4)
        try:
            fcntl.ioctl(self.master, termios.FIONREAD, buf)
        except OSError:
            return 0
        return int.from_bytes(buf, "little")

    def read(self, n: int) -> bytes:
        try:
            return os.read(self.master, n)
        except (BlockingIOError, OSError):
            return b""

    def write(self, data: bytes) -> None:
        try:
            os.write(self.master, data)
        except (BlockingIOError, OSError):
            self.dropped += 1

    def close(self) -> None:
        try:
            if self.link.is_symlink() and os.readlink(self.link) == self.name:
                self.link.unlink()
        except OSError:
            pass
        for fd in (self.master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass


class Beam(Protocol):
    """The card-out beam as the firmware reads it."""

    def broken(self) -> bool:
        """True while the beam is interrupted (a card in the mouth)."""
        ...


class GpioBeam:
    """The card-out beam on a gpiozero input device (``DigitalInputDevice``; ``MockFactory`` in
    tests): broken while its value is ``broken_level`` (an IR break-beam receiver with a pull-up
    reads low, 0, while the beam is broken)."""

    def __init__(self, device: Any, broken_level: int = 0) -> None:
        self.device = device
        self.broken_level = broken_level

    def broken(self) -> bool:
        return int(self.device.value) == self.broken_level


class _Unplugged:
    """The port while unplugged: nothing comes in, what goes out is lost."""

    in_waiting = 0

    def read(self, n: int) -> bytes:
        return b""

    def write(self, data: bytes) -> None:
        pass


class _BridgeCore(ShoeCore):
    secrets: SecretFile | None = None

    def on_secret(self, secret: bytes) -> None:
        if self.secrets is not None:
            self.secrets.save(secret)


class Bridge(Closeable):
    """The shoe, run on the Pi.

    :param state: the folder of the state file and the secret (:data:`DEFAULT_STATE`).
    :param link: the stable symlink to the pty (:data:`DEFAULT_LINK`).
    :param serial: the shoe's serial number (the table's ``[shoe] serial``).
    :param reader: a reader module (``drivers/shoe_fw/reader.py``).
    :param beam: the card-out beam (``broken()``; :class:`GpioBeam`).
    :param decks: the live-deck folder (:data:`DEFAULT_DECKS`).
    :param pairing: start in pairing mode (``shoe-ctl pair`` sends the secret).
    :param clock: monotonic seconds.
    :param poll_s: seconds between turns of the loop at most (the beam's polling period).
    :param firmware: keyword arguments for :class:`~drivers.shoe_fw.firmware.Firmware` (timers).
    :raises BridgeError: a state or secret file that cannot be used.
    """

    DECKS_EVERY_S = 2.0

    def __init__(self, *, state: Path = DEFAULT_STATE, link: Path = DEFAULT_LINK, serial: str, reader: ReaderModule,
                 beam: Beam, decks: Path = DEFAULT_DECKS, pairing: bool = False,
                 clock: Callable[[], float] = time.monotonic, poll_s: float = 0.005,
                 firmware: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.state = StateFile(state)
        self.secrets = SecretFile(state)
        self.link = Path(link)
        self.decks = Path(decks)
        self.clock = clock
        self.poll_s = poll_s
        kept = self.state.load()
        secret = self.secrets.load()
        now = clock()
        core = _BridgeCore(serial, firmware=FIRMWARE, pairing=pairing, keeps_buffer=True, names_foreign=True, now=now)
        if secret is not None:
            core.set_secret(secret)
        core.secrets = self.secrets
        if kept is not None:
            core.restore(kept[0], kept[1], now)
        self.core = core
        self.book = deckmap.DeckBook()
        self.deck_errors: list[str] = []
        self._decks_seen: tuple[bytes, tuple[tuple[str, float], ...]] | None = None
        self._decks_at = 0.0
        self.retired_tags: dict[str, tuple[str, int]] = {}
        self.fw = Firmware(core, reader, beam, self.lookup, now=now, retired=self.lookup_retired, **(firmware or {}))
        self.state.save(core.kept(), core.ring.held())
        core.dirty = False
        self.port: PtyPort | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.errors = 0

    # ---------------------------------------------------------------- decks

    def lookup(self, uid: bytes) -> tuple[str, int] | None:
        """``(deck, card code)`` of a tag in the live decks, or None."""
        return self.book.lookup(uid)

    def lookup_retired(self, uid: bytes) -> tuple[str, int] | None:
        """``(deck, card code)`` of a tag in a retired deck (``decks/retired/``), or None."""
        return self.retired_tags.get(deckmap.uid_hex(uid))

    def load_decks(self, now: float) -> None:
        """Read the live decks again when the folder changed (each bad file logged by name)."""
        self._decks_at = now
        secret = self.core.auth.secret
        try:
            seen = tuple(sorted((e.name, e.stat().st_mtime) for e in os.scandir(self.decks)
                                if e.name.endswith(".json") or e.name == "retired"))
        except OSError:
            seen = ()
        key = (secret or b"", seen)
        if key == self._decks_seen:
            return
        self._decks_seen = key
        if secret is None:
            self.book, self.deck_errors, self.retired_tags = deckmap.DeckBook(), [], {}
            return
        seal = deckmap.seal_key(secret)
        book, errors = deckmap.load_folder(str(self.decks), seal, os.listdir, lambda path: Path(path).read_bytes())
        retired, retired_errors = deckmap.load_retired(str(self.decks / "retired"), seal, os.listdir,
                                                       lambda path: Path(path).read_bytes())
        self.book, self.deck_errors, self.retired_tags = book, errors + retired_errors, retired
        log.info("live decks: %s", ", ".join(sorted(book.decks)) or "none")
        for line in errors:
            log.warning("deck map refused: %s", line)

    # ---------------------------------------------------------------- running

    def start(self) -> Bridge:
        """Open the pty, say HELLO, start the loop's thread (returns self)."""
        with self._lock:
            if self._thread is not None:
                return self
            self.port = PtyPort(self.link)
            now = self.clock()
            self.load_decks(now)
            self.fw.start(now)
            self.core.say_hello()
            self._thread = threading.Thread(target=self._run, name=f"shoe-bridge {self.link}", daemon=True)
            self._thread.start()
        auth = self.core.auth
        pairing = (f"paired (secret in {self.secrets.path}" + ("; pairing mode takes no new secret)" if auth.pairing
                                                               else ")")
                   if auth.secret is not None else
                   "in pairing mode: run shoe-ctl pair" if auth.pairing else "not paired (protocol version 1)")
        log.info("shoe %s on %s (%s), next event %d, %s", self.core.cfg.serial, self.link, self.port.name,
                 self.core.next_seq, pairing)
        return self

    def step(self, now: float | None = None) -> None:
        """One turn of the loop (the thread calls it; a test may too)."""
        now = self.clock() if now is None else now
        with self._lock:
            if now >= self._decks_at + self.DECKS_EVERY_S:
                self.load_decks(now)
            turn(self.fw, self.port if self.port is not None else _Unplugged(), self.state, now)

    def unplug(self) -> None:
        """Close the pty (the host reads EIO, as when a cable is pulled); the firmware runs on."""
        with self._lock:
            if self.port is not None:
                self.port.close()
                self.port = None

    def replug(self) -> None:
        """A new pty behind the same symlink; the shoe says HELLO unasked."""
        with self._lock:
            if self.port is None:
                self.port = PtyPort(self.link)
                self.core.plugged_in(self.clock())
                self.core.say_hello()

    def _run(self) -> None:
        while not self._closed:
            try:
                self.step()
            except Exception:  # a broken turn is logged; the loop goes on
                self.errors += 1
                log.exception("shoe bridge: a turn failed")
            wait = min(self.poll_s, max(0.0, self.fw.next_deadline() - self.clock()))
            time.sleep(wait)

    def _close(self) -> None:
        if self._thread is not None:
            join_thread(self._thread, 5.0)
        if self.port is not None:
            self.port.close()

    def __enter__(self) -> Bridge:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
