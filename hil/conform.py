"""The shoe conformance kit: a shoe maker runs it against their own shoe (``shoe-ctl conform``).

The kit is a host of its own, written for testing: it opens the shoe's port with pyserial, writes
the frames it chooses (also wrong ones: dropped and duplicated ACKs, corrupted and malformed host
frames, resend requests, a host restart) and times every answer against the limits of
``docs/protocol.md`` section 13. No test needs a fault hook inside the shoe: what only a person or
a bench robot can do (pull a card, power-cycle, unplug) is asked through the operator hook
(:class:`CommandOperator`: a command given the request; it answers by its exit status). Each test
starts from a resynchronised shoe (nothing held unacked) and leaves it so. The report is JSON and
JUnit XML, with the protocol version and the shoe's identity. How to run it: ``docs/conformance.md``.
"""

from __future__ import annotations

import json
import os
import shlex
import struct
import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import serial
from cobs import cobs

from drivers import protocol as p
from drivers.shoe import is_socket_url, read_some
from hil.deck import Deck
from hil.reader_shoe import temporary_reader_shoe
from hil.urlhandler.protocol_vshoe import device_for_url
from hil.virtual_shoe import VirtualShoe

KIT_VERSION = "1.0"

# the limits of docs/protocol.md section 13, in seconds
HELLO_ANSWER_S = 0.1
HEARTBEAT_MAX_S = 1.0
HEARTBEAT_MIN_S = 0.05
COMMAND_APPLIED_S = 0.1
RESEND_ON_REQUEST_S = 0.1
RESEND_ON_TIMEOUT_S = 0.3 + 0.1
CARD_AFTER_SENSOR_S = 0.05
RAW_KEPT = 4096  # bytes of the line kept to tell a paired shoe (a few dozen frames)
NO_HOST_S = 3.0 + 0.1
UNASKED_HELLO_S = 2.0


class Skip(Exception):
    """The test cannot run here (no operator for what it needs)."""


class Failure(AssertionError):
    """The shoe broke a rule; the message names the rule."""


def check(cond: bool, text: str) -> None:
    """Fail the test with ``text`` unless ``cond``."""
    if not cond:
        raise Failure(text)


# ----------------------------------------------------------------------------- the operator


@dataclass(frozen=True)
class Answer:
    """The operator's answer: ``done`` (False: it cannot do that here), ``at`` the wall-clock
    time (``time.time()``) the action happened when the operator knows it, else None."""

    done: bool
    at: float | None = None


class Operator:
    """Does what only a person or a robot can: ``pull-card``, ``pull-foreign`` (a card of no
    enrolled deck across the mouth), ``power-cycle``, ``unplug``, ``replug``. The base class can do nothing (each such test is skipped)."""

    def request(self, action: str) -> Answer:
        """Ask for ``action``; returns when it is done (or refused)."""
        return Answer(False)


class CommandOperator(Operator):
    """Runs ``command ACTION`` for each request (e.g. a bench robot's script, or
    a person's script that prints the request and waits for Enter on the terminal: the operator.sh of
    docs/build-a-shoe.md, "The bridge on the Pi"). Exit 0 =
    done, any other status = cannot. It may print ``{"at": UNIX_TIME}`` on stdout: when the card
    passed the sensor (for the card-to-frame limit).

    :param command: the command line (split like a shell would, no shell run).
    :param timeout: seconds to wait for the command.
    """

    def __init__(self, command: str, timeout: float = 120.0) -> None:
        self.argv = shlex.split(command)
        self.timeout = timeout

    def request(self, action: str) -> Answer:
        try:
            done = subprocess.run([*self.argv, action], capture_output=True, text=True, timeout=self.timeout,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired):
            return Answer(False)
        at = None
        try:
            at = float(json.loads(done.stdout.strip().splitlines()[-1])["at"])
        except (ValueError, KeyError, IndexError, TypeError):
            pass
        return Answer(done.returncode == 0, at)


class CallableOperator(Operator):
    """An operator in the same process: ``actions`` maps an action to a function that does it
    and returns the time it happened (``time.time()``) or None."""

    def __init__(self, actions: dict[str, Callable[[], float | None]]) -> None:
        self.actions = actions

    def request(self, action: str) -> Answer:
        fn = self.actions.get(action)
        if fn is None:
            return Answer(False)
        return Answer(True, fn())


# ----------------------------------------------------------------------------- the raw host


@dataclass
class Seen:
    """A message the kit received and when (``time.monotonic()``)."""

    at: float
    msg: p.Message


class RawHost:
    """The kit's side of the line: write any bytes, read and time every message.

    :param url: anything ``serial.serial_for_url`` opens.
    :param secret: the shoe's pairing secret: the kit speaks version 2 (docs/protocol.md section
        14): HOST_HELLO sealed with a fresh challenge under the hello key, every other frame under
        the session's host key with a rising counter; only shoe frames whose MAC verifies are
        taken (under the session's key, or the hello key outside a session). None: version 1.
    """

    def __init__(self, url: str, secret: bytes | None = None) -> None:
        self.url = url
        self.secret = secret
        self.session: Any = None
        self._challenges: list[bytes] = []  # the last 16 sent, as the product's host keeps them
        self._tx_ctr = self._rx_ctr = 0
        self._socket_port = is_socket_url(url)
        self.ser: Any = None
        self.decoder = p.FrameDecoder()
        self.inbox: list[Seen] = []
        self.raw = bytearray()  # the last bytes read (at most RAW_KEPT): to tell a paired shoe
        self._host_seq = 0

    def open(self) -> None:
        """Open the port (a fresh decoder: a host start)."""
        self.ser = serial.serial_for_url(self.url, baudrate=115200, timeout=0.005)
        self.decoder = p.FrameDecoder() if self.secret is None else p.SealedDecoder()
        self.session = None
        self.inbox = []
        self.raw = bytearray()

    def close(self) -> None:
        """Close the port (idempotent)."""
        if self.ser is not None:
            try:
                self.ser.close()
            finally:
                self.ser = None

    def seq(self) -> int:
        """The next host frame counter."""
        self._host_seq += 1
        return self._host_seq

    def write(self, data: bytes) -> float:
        """Write ``data``; returns the time the write finished."""
        self.ser.write(data)
        self.ser.flush()
        return time.monotonic()

    def send(self, msg: p.Message) -> float:
        """Write one message (sealed in version 2); returns the time."""
        if self.secret is None:
            return self.write(p.encode(msg))
        if isinstance(msg, p.HostHello):
            challenge = os.urandom(p.NONCE_SIZE)
            self._challenges = [*self._challenges[-15:], challenge]
            return self.write(p.seal(msg, p.hello_key(self.secret), 0, challenge=challenge))
        if self.session is None:
            return self.write(p.seal(msg, p.hello_key(self.secret), 0))  # a paired shoe ignores it
        self._tx_ctr += 1
        return self.write(p.seal(msg, self.session.host_mac, self._tx_ctr))

    def _taken(self, item: Any) -> Any:
        """The message of a received frame when the kit may take it (version 2: a MAC that
        verifies; a HELLO answering the kit's challenge opens the session), else None."""
        if self.secret is None:
            return item
        if not isinstance(item, p.Sealed):
            return None  # an unauthenticated frame from a paired shoe: not taken
        if isinstance(item.msg, p.Hello) and item.challenge in self._challenges:
            keys = p.session_keys(self.secret, item.challenge, item.nonce)
            if not item.verify(keys.shoe_mac):
                return None
            self.session = keys  # that challenge and every older one are spent
            self._challenges = self._challenges[self._challenges.index(item.challenge) + 1:]
            self._tx_ctr, self._rx_ctr = 0, item.ctr
            return item.msg
        if self.session is not None and item.ctr > self._rx_ctr and item.verify(self.session.shoe_mac):
            self._rx_ctr = item.ctr
            return item.msg
        return item.msg if item.verify(p.hello_key(self.secret)) else None

    def poll(self, seconds: float = 0.0) -> None:
        """Read whatever arrives for ``seconds`` (at least one read)."""
        end = time.monotonic() + seconds
        while True:
            try:
                data = read_some(self.ser, self._socket_port)
            except (serial.SerialException, OSError):
                data = b""
                time.sleep(0.01)
            if data:
                now = time.monotonic()
                taken = (self._taken(m) for m in self.decoder.feed(data))
                self.inbox.extend(Seen(now, m) for m in taken if m is not None)
                self.raw += data
                del self.raw[:-RAW_KEPT]
            if time.monotonic() >= end:
                return

    def wait_for(self, pred: Callable[[p.Message], bool], timeout: float, after: float = 0.0) -> Seen | None:
        """The first message received at or after ``after`` that matches ``pred`` (reading up to
        ``timeout`` seconds for it), or None."""
        end = time.monotonic() + timeout
        while True:
            for seen in self.inbox:
                if seen.at >= after and pred(seen.msg):
                    return seen
            if time.monotonic() >= end:
                return None
            self.poll(0.005)

    def since(self, t: float) -> list[Seen]:
        """Everything received at or after ``t``."""
        return [s for s in self.inbox if s.at >= t]

    def hello(self, timeout: float = 1.0) -> tuple[p.Hello, float]:
        """Send HOST_HELLO; the HELLO that answers it and the answer time (seconds)."""
        version = p.PROTOCOL_VERSION if self.secret is None else p.AUTH_VERSION
        t0 = self.send(p.HostHello(self.seq(), version, version))
        seen = self.wait_for(lambda m: isinstance(m, p.Hello), timeout, after=t0)
        check(seen is not None, f"no HELLO within {timeout} s of HOST_HELLO" + (self.paired_shoe() or ""))
        assert seen is not None and isinstance(seen.msg, p.Hello)
        return seen.msg, seen.at - t0

    def paired_shoe(self) -> str | None:
        """When the bytes read are version-2 (authenticated) frames: what to say (the shoe is
        paired and drops this kit's version-1 frames), else None."""
        sealed = [m for m in p.SealedDecoder().feed(bytes(self.raw)) if isinstance(m, p.Sealed)]
        if not sealed or self.secret is not None:
            return None
        serial = next((m.msg.serial for m in sealed if isinstance(m.msg, p.Hello)), None)
        return (f": the shoe{f' {serial}' if serial else ''} sends version-2 (authenticated) frames: it is paired "
                "and acts on no version-1 frame (docs/protocol.md section 15); this kit speaks version 1, so test "
                "the shoe before its first pairing")

    def ack_all(self, next_seq: int) -> None:
        """ACK every event below ``next_seq`` (the shoe may forget them)."""
        if next_seq > 1:
            self.send(p.Ack(self.seq(), next_seq - 1, next_seq))
        else:
            self.send(p.Ack(self.seq(), 0, 1))


# ----------------------------------------------------------------------------- results


@dataclass
class Result:
    """One test's outcome: ``status`` ``passed`` / ``failed`` / ``skipped``, ``message``, the
    ``measured`` figures (seconds unless the key says otherwise), ``seconds`` it took."""

    name: str
    doc: str
    status: str = "passed"
    message: str = ""
    measured: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def _raw(mtype: int, seq: int, payload: bytes, *, bad_crc: bool = False) -> bytes:
    """A frame around any payload, with a correct CRC unless ``bad_crc`` (the codec would refuse
    to make a malformed one)."""
    data = p.HEADER.pack(mtype, seq) + payload
    crc = p.crc32(data) ^ (1 if bad_crc else 0)
    return p.DELIMITER + bytes(cobs.encode(data + p.CRC.pack(crc))) + p.DELIMITER


def malformed_host_frames(token: int, epoch: int) -> list[tuple[str, bytes]]:
    """Host frames a shoe must drop (docs/protocol.md section 11, shoe rows), each of which would
    change the LEDs or the counter if the shoe took it: ``(row, frame)``."""
    led = struct.pack(">BBBBHH", token, 2, 1, 0, 0, 0)
    return [
        ("F-CRC", _raw(p.T_LED, 1, led, bad_crc=True)),
        ("F-COBS", b"\x00\x09\x83\x00\x00\x00\x01\x00"),
        ("F-SHORT", b"\x00" + bytes(cobs.encode(b"\x83\x00\x00\x01")) + b"\x00"),
        ("F-LONG", b"\x00" + b"\x83" * 300 + b"\x00"),
        ("M-LENGTH", _raw(p.T_LED, 1, led + b"\x00")),
        ("L-TOKEN", _raw(p.T_LED, 1, struct.pack(">BBBBHH", 0, 2, 1, 0, 0, 0))),
        ("L-SIGNAL", _raw(p.T_LED, 1, struct.pack(">BBBBHH", token, 12, 1, 0, 0, 0))),
        ("L-MODE", _raw(p.T_LED, 1, struct.pack(">BBBBHH", token, 2, 1, 3, 0, 0))),
        ("L-LEDS", _raw(p.T_LED, 1, struct.pack(">BBBBHH", token, 2, 0x21, 0, 0, 0))),
        ("R-EPOCH", _raw(p.T_RESET, 1, b"\x00\x00")),
        ("M-LENGTH", _raw(p.T_RESET, 1, struct.pack(">HB", epoch, 0))),
        ("HH-RANGE", _raw(p.T_HOST_HELLO, 1, b"\x00\x01")),
        ("HH-RANGE", _raw(p.T_HOST_HELLO, 1, b"\x02\x01")),
        ("A-ORDER", _raw(p.T_ACK, 1, struct.pack(">IIB", 5, 5, 1))),
        ("A-FLAGS", _raw(p.T_ACK, 1, struct.pack(">IIB", 0, 1, 4))),
        ("F-TYPE", _raw(0x9F, 1, b"\x01")),
    ]


# ----------------------------------------------------------------------------- the kit


def _event_at(seq: int, *types: type) -> Callable[[p.Message], bool]:
    """A test for :meth:`RawHost.wait_for`: a message of one of ``types`` numbered ``seq``."""
    return lambda m: isinstance(m, types) and getattr(m, "seq", None) == seq


def card_at(host: RawHost, seq: int) -> float:
    """When the event ``seq`` was first received (monotonic seconds)."""
    return min(s.at for s in host.inbox if getattr(s.msg, "seq", None) == seq and isinstance(s.msg, p.CardMsg))


def _case(name: str, doc: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Name a kit test (``name`` in the report) and say what it checks (``doc``)."""

    def mark(fn: Callable[..., None]) -> Callable[..., None]:
        fn.kit_name = name  # type: ignore[attr-defined]
        fn.kit_doc = doc  # type: ignore[attr-defined]
        return fn

    return mark


class Kit:
    """The conformance tests against one shoe.

    :param url: the shoe's port.
    :param operator: who pulls cards, power-cycles, unplugs (default: nobody; those tests skip).
    :param time_scale: multiplies every timing limit (1 for a real shoe; a loaded CI machine
        running a simulated shoe may need more; the report states the factor).
    :param operator_budget: seconds the operator's sensor time (``at``) may be off, either way
        (a person pressing Enter: about 0.3; a robot timestamping the sensor: a few ms). The card
        limit is the shoe's 50 ms plus this budget; the report states it.
    :param timed: False: the timing limits are measured and each one missed is listed in the
        test's ``measured["over_limit"]``, but no test fails for one (a simulated shoe sharing a
        loaded machine with the kit, whose own reads can stall past any limit); waits stay
        bounded by ``time_scale``. The report states it. A shoe is certified only timed.
    """

    def __init__(self, url: str, operator: Operator | None = None, *, time_scale: float = 1.0,
                 operator_budget: float = 0.0, secret: bytes | None = None, timed: bool = True) -> None:
        self.url = url
        self.timed = timed
        self.protocol = p.PROTOCOL_VERSION if secret is None else p.AUTH_VERSION
        self.operator = operator or Operator()
        self.k = time_scale
        self.budget = operator_budget
        self.host = RawHost(url, secret)
        self.hello: p.Hello | None = None
        self.identity: p.Hello | None = None
        """The shoe's first HELLO (its identity in the report: the boot the kit started with)."""
        self.results: list[Result] = []
        self._token = 100

    # -------------------------------------------------------------- plumbing

    def resync(self) -> p.Hello:
        """Bring the shoe to a known state: HOST_HELLO, take every held event, ACK them all,
        until its HELLO says nothing is held. Returns that HELLO."""
        for _ in range(20):
            hello, _ = self.host.hello(1.0 * self.k)
            self.host.poll(0.1 * self.k)
            self.host.ack_all(hello.seq)
            self.host.poll(0.05 * self.k)
            again, _ = self.host.hello(1.0 * self.k)
            if again.first_seq == again.seq:
                self.hello = again
                if self.identity is None:
                    self.identity = again
                self.host.poll(0.05)
                self.host.inbox.clear()
                return again
        raise Failure("the shoe still holds events after 20 rounds of HOST_HELLO and ACK")

    def _next_token(self, avoid: int) -> int:
        self._token = self._token % 255 + 1
        if self._token == avoid:
            self._token = self._token % 255 + 1
        return self._token

    def _within(self, r: Result, cond: bool, text: str) -> None:
        """A timing limit: fail the test with ``text`` unless ``cond``; untimed (:class:`Kit`'s
        ``timed``), a missed limit is listed in ``r.measured["over_limit"]`` instead."""
        if self.timed:
            check(cond, text)
        elif not cond:
            r.measured.setdefault("over_limit", []).append(text)

    def _heartbeat_after(self, t: float, pred: Callable[[p.Heartbeat], bool], timeout: float) -> Seen | None:
        return self.host.wait_for(lambda m: isinstance(m, p.Heartbeat) and pred(m), timeout, after=t)

    def _pull(self) -> tuple[float, float | None]:
        """Ask the operator for a card: (monotonic time the request was made, the monotonic time
        the card passed the sensor when the operator says, else None)."""
        asked = time.monotonic()
        answer = self.operator.request("pull-card")
        if not answer.done:
            raise Skip("needs an operator who pulls a card (--operator)")
        at = None if answer.at is None else time.monotonic() - (time.time() - answer.at)
        return asked, at

    def _card(self, after: float, timeout: float = 2.0) -> Seen:
        seen = self.host.wait_for(lambda m: isinstance(m, p.CardMsg), timeout * self.k, after=after)
        check(seen is not None, f"no CARD within {timeout * self.k} s of the pull")
        assert seen is not None
        return seen

    def _run(self, test: Callable[[Result], None]) -> None:
        """Run one test between two resyncs and note its result; a shoe that cannot be
        resynchronised fails the test without running it."""
        result = Result(getattr(test, "kit_name", test.__name__), getattr(test, "kit_doc", ""))
        t0 = time.monotonic()
        try:
            if self.host.ser is None:
                self.host.open()
            self.resync()
            test(result)
            self.resync()  # each test leaves the shoe as it found it
        except Skip as exc:
            result.status, result.message = "skipped", str(exc)
        except Failure as exc:
            result.status, result.message = "failed", str(exc)
        except (serial.SerialException, OSError) as exc:
            result.status, result.message = "failed", f"port error: {exc}"
        result.seconds = round(time.monotonic() - t0, 3)
        self.results.append(result)

    # -------------------------------------------------------------- the tests

    def run(self, only: set[str] | None = None) -> dict[str, Any]:
        """Run every test (or those whose method name, ``t_`` dropped, is in ``only``); returns
        the report (see :meth:`report`)."""
        self.started = time.time()
        try:
            for test in (self.t_handshake, self.t_every_host_hello_answered, self.t_heartbeat_bounds,
                         self.t_led_applied, self.t_counter_reset, self.t_malformed_host_frames,
                         self.t_card_delivery, self.t_dropped_ack_resent_on_timeout, self.t_duplicated_acks,
                         self.t_resend_request, self.t_ack_beyond_next_seq, self.t_host_restart,
                         self.t_no_host_pattern, self.t_power_cycle, self.t_unplug, self.t_foreign_card):
                if only is None or test.__name__[2:] in only:
                    self._run(test)
        finally:
            self.host.close()
        return self.report()

    @_case("handshake", "HELLO answers HOST_HELLO within 100 ms, valid, version 1 (sections 4, 13)")
    def t_handshake(self, r: Result) -> None:
        hello, dt = self.host.hello(1.0 * self.k)
        r.measured["hello_answer_s"] = round(dt, 4)
        check(hello.version == self.protocol, f"HELLO version {hello.version}, expected {self.protocol}")
        self._within(r, dt <= HELLO_ANSWER_S * self.k, f"HELLO came {dt * 1000:.1f} ms after HOST_HELLO (limit "
              f"{HELLO_ANSWER_S * self.k * 1000:.0f} ms)")
        check(self.host.decoder.stats.bad_frames == 0, "bad frames from the shoe on a clean line: "
              f"{self.host.decoder.stats.reasons} {self.host.decoder.stats.last_malformed}")

    @_case("every-host-hello", "every HOST_HELLO gets a HELLO with the same boot id (section 4)")
    def t_every_host_hello_answered(self, r: Result) -> None:
        boots = set()
        for _ in range(3):
            hello, _ = self.host.hello(1.0 * self.k)
            boots.add(hello.boot_id)
        r.measured["hellos"] = 3
        check(len(boots) == 1, f"boot id changed without a restart: {boots}")

    @_case("heartbeat", "a HEARTBEAT at least every 1 s, seq = next_seq (sections 3, 4, 13)")
    def t_heartbeat_bounds(self, r: Result) -> None:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 3.5:
            self.host.ack_all(self.hello.seq if self.hello else 1)  # a host is listening
            self.host.poll(0.3)
        beats = [s for s in self.host.since(t0) if isinstance(s.msg, p.Heartbeat)]
        check(len(beats) >= 3, f"{len(beats)} heartbeats in 3.5 s")
        gaps = [b.at - a.at for a, b in zip(beats, beats[1:], strict=False)]
        r.measured["heartbeat_max_gap_s"] = round(max(gaps), 4)
        r.measured["heartbeat_min_gap_s"] = round(min(gaps), 4)
        self._within(r, max(gaps) <= HEARTBEAT_MAX_S + 0.05 * self.k, f"heartbeats {max(gaps):.3f} s apart (limit 1 s)")
        self._within(r, min(gaps) >= HEARTBEAT_MIN_S / self.k, f"heartbeats {min(gaps) * 1000:.1f} ms apart with no "
              "command between (at least 50 ms)")
        seqs = {b.msg.seq for b in beats}
        check(self.hello is not None and seqs == {self.hello.seq},
              f"HEARTBEAT seq {sorted(seqs)} is not the shoe's next_seq {self.hello and self.hello.seq}")

    @_case("led", "an LED pattern is applied and reported by a HEARTBEAT within 100 ms; a repeat keeps it (sections "
                  "4, 13)")
    def t_led_applied(self, r: Result) -> None:
        hello = self.hello
        assert hello is not None
        token = self._next_token(hello.led_token)
        led = p.Led(self.host.seq(), token, "deal", ("green",))
        t0 = self.host.send(led)
        seen = self._heartbeat_after(t0, lambda h: h.led_token == token, 1.0 * self.k)
        check(seen is not None, f"no HEARTBEAT with LED token {token} within 1 s")
        assert seen is not None
        r.measured["led_applied_s"] = round(seen.at - t0, 4)
        self._within(r, seen.at - t0 <= COMMAND_APPLIED_S * self.k, f"LED reported after {seen.at - t0:.3f} s (limit "
              "0.1 s)")
        t1 = self.host.send(led)
        again = self._heartbeat_after(t1, lambda h: True, 1.2 * self.k)
        check(again is not None and isinstance(again.msg, p.Heartbeat) and again.msg.led_token == token,
              "a repeated LED frame changed the token shown")

    @_case("counter-reset", "RESET_COUNTER to a new epoch: HEARTBEAT with it and dispense 0 within 100 ms; a repeat "
                            "is harmless (section 4)")
    def t_counter_reset(self, r: Result) -> None:
        hello = self.hello
        assert hello is not None
        epoch = hello.epoch % 0xFFFF + 1
        t0 = self.host.send(p.ResetCounter(self.host.seq(), epoch))
        seen = self._heartbeat_after(t0, lambda h: h.epoch == epoch, 1.0 * self.k)
        check(seen is not None, f"no HEARTBEAT with epoch {epoch} within 1 s")
        assert seen is not None and isinstance(seen.msg, p.Heartbeat)
        r.measured["reset_applied_s"] = round(seen.at - t0, 4)
        check(seen.msg.dispense == 0, f"dispense {seen.msg.dispense} after the reset")
        self._within(r, seen.at - t0 <= COMMAND_APPLIED_S * self.k, f"reset reported after {seen.at - t0:.3f} s")
        after, _ = self.host.hello(1.0 * self.k)
        check(after.epoch == epoch, f"HELLO epoch {after.epoch} after the reset to {epoch}")

    @_case("malformed-host-frames", "corrupted and malformed host frames are dropped and change nothing (section 11, "
                                    "shoe rows)")
    def t_malformed_host_frames(self, r: Result) -> None:
        hello = self.hello
        assert hello is not None
        token = self._next_token(hello.led_token)
        frames = malformed_host_frames(token, hello.epoch % 0xFFFF + 1)
        t0 = time.monotonic()
        for _, frame in frames:
            self.host.write(frame)
        self.host.poll(0.3 * self.k)
        after, _ = self.host.hello(1.0 * self.k)
        r.measured["frames_sent"] = len(frames)
        check(after.led_token == hello.led_token, f"a dropped LED frame was shown (token {after.led_token})")
        check(after.epoch == hello.epoch, f"a dropped RESET_COUNTER was applied (epoch {after.epoch})")
        check(after.boot_id == hello.boot_id and after.seq == hello.seq, "the shoe restarted or made events")
        hellos = [s for s in self.host.since(t0) if isinstance(s.msg, p.Hello)]
        check(len(hellos) == 1, f"{len(hellos) - 1} HELLO(s) answered a malformed HOST_HELLO")

    @_case("card", "a pulled card: one valid CARD within 50 ms of the sensor, a declared reader, dispense + 1; the "
                   "ACK frees it (sections 4, 5, 13)")
    def t_card_delivery(self, r: Result) -> None:
        hello = self.hello
        assert hello is not None
        done, at = self._pull()
        seen = self._card(done)
        card = seen.msg
        assert isinstance(card, p.CardMsg)
        check(card.seq == hello.seq, f"CARD seq {card.seq}, expected the shoe's next_seq {hello.seq}")
        check(card.reader == "none" or card.reader in hello.readers, f"CARD reader {card.reader} not declared")
        r.measured["card_after_request_s"] = round(seen.at - done, 4)  # the operator's time in it: never checked
        if at is not None:
            lag = seen.at - at
            r.measured["card_after_sensor_s"] = round(lag, 4)
            if self.budget:
                r.measured["operator_budget_s"] = self.budget
            check(lag >= -self.budget, f"the operator's sensor time is {-lag * 1000:.1f} ms after the CARD arrived: "
                  f"its clock or its time of the pull is off by more than its budget ({self.budget * 1000:g} ms)")
            self._within(r, lag <= CARD_AFTER_SENSOR_S * self.k + self.budget,
                  f"CARD {lag * 1000:.1f} ms after the operator's sensor time (limit 50 ms"
                  + (f" + the operator's budget {self.budget * 1000:g} ms)" if self.budget else ")"))
        after, _ = self.host.hello(1.0 * self.k)
        check(after.first_seq == card.seq, "the unacked CARD is not held (first_seq)")
        if hello.card_total is not None and after.card_total is not None:
            check(after.card_total == hello.card_total + 1, "card_total did not count the card")
        self.host.ack_all(after.seq)
        self.host.poll(0.05)
        freed, _ = self.host.hello(1.0 * self.k)
        check(freed.first_seq == freed.seq, "the ACK did not free the CARD")

    @_case("dropped-ack", "an event whose ACK is lost is resent within 0.3 s + 100 ms (section 5)")
    def t_dropped_ack_resent_on_timeout(self, r: Result) -> None:
        done, _ = self._pull()
        first = self._card(done)
        # the kit "loses" every ACK: it sends none and watches the resend
        again = self.host.wait_for(lambda m: isinstance(m, p.CardMsg) and m.seq == first.msg.seq,
                                   2.0 * self.k, after=first.at + 0.001)
        check(again is not None, "the unacked CARD was not resent within 2 s")
        assert again is not None
        r.measured["resend_on_timeout_s"] = round(again.at - first.at, 4)
        self._within(r, again.at - first.at <= RESEND_ON_TIMEOUT_S * self.k,
              f"resent after {again.at - first.at:.3f} s (limit 0.4 s)")
        check(again.msg == first.msg, "the resent CARD differs from the first")

    @_case("duplicated-acks", "a repeated and an older ACK free nothing more and nothing less (section 4, ACK)")
    def t_duplicated_acks(self, r: Result) -> None:
        done, _ = self._pull()
        self._card(done)
        done2, _ = self._pull()
        card2 = self._card(done2)
        held, _ = self.host.hello(1.0 * self.k)
        check(held.seq - held.first_seq >= 2, "two unacked cards are not both held")
        first = held.first_seq
        ack = p.Ack(self.host.seq(), first, first + 1)
        for _ in range(3):
            self.host.send(ack)
        self.host.send(p.Ack(self.host.seq(), first - 1, first))  # older: frees nothing back
        self.host.poll(0.1)
        after, _ = self.host.hello(1.0 * self.k)
        r.measured["held_after"] = after.seq - after.first_seq
        check(after.first_seq == first + 1, f"after ACK {first} (three times) and an older one, first_seq is "
              f"{after.first_seq}, expected {first + 1}")
        check(card2.msg.seq == first + 1 or after.seq > first + 1, "the second card was lost")

    @_case("resend-request", "an ACK with the resend flag gets the events from want within 100 ms, at most once per "
                             "20 ms for the same want (section 5)")
    def t_resend_request(self, r: Result) -> None:
        done, _ = self._pull()
        card = self._card(done)
        seq = card.msg.seq
        self.host.send(p.Ack(self.host.seq(), seq - 1, seq))  # received nothing: the shoe may keep it
        self.host.poll(0.05)
        t0 = self.host.send(p.Ack(self.host.seq(), seq - 1, seq, resend=True))
        seen = self.host.wait_for(lambda m: isinstance(m, p.CardMsg) and m.seq == seq, 1.0 * self.k, after=t0)
        check(seen is not None, "no resend after a resend request")
        assert seen is not None
        r.measured["resend_on_request_s"] = round(seen.at - t0, 4)
        self._within(r, seen.at - t0 <= RESEND_ON_REQUEST_S * self.k, f"resend after {seen.at - t0:.3f} s (limit 0.1 s)")

    @_case("ack-beyond", "an ACK of events never sent is ignored: the held event stays (section 4, ACK; row "
                         "A-BEYOND)")
    def t_ack_beyond_next_seq(self, r: Result) -> None:
        done, _ = self._pull()
        card = self._card(done)
        seq = card.msg.seq
        self.host.send(p.Ack(self.host.seq(), seq + 5, seq + 6))
        self.host.poll(0.1)
        after, _ = self.host.hello(1.0 * self.k)
        r.measured["first_seq_after"] = after.first_seq
        check(after.first_seq == seq, f"an ACK beyond next_seq freed the event (first_seq {after.first_seq})")

    @_case("host-restart", "a host that closes and reopens the port gets the same boot and every held event again "
                           "(section 6)")
    def t_host_restart(self, r: Result) -> None:
        hello = self.hello
        assert hello is not None
        done, _ = self._pull()
        card = self._card(done)
        self.host.close()
        time.sleep(0.3)
        self.host.open()
        again, dt = self.host.hello(1.0 * self.k)
        r.measured["hello_answer_after_reopen_s"] = round(dt, 4)
        check(again.boot_id == hello.boot_id, "the boot id changed on a host restart")
        check(again.first_seq == card.msg.seq, "the held CARD is not announced after the host restart")
        resent = self.host.wait_for(lambda m: isinstance(m, p.CardMsg) and m.seq == card.msg.seq, 1.0 * self.k)
        check(resent is not None, "the held CARD was not resent after HOST_HELLO")

    @_case("no-host", "with no host frame for 3 s the shoe drops the host's LED pattern (token 0) (section 4, LED)")
    def t_no_host_pattern(self, r: Result) -> None:
        hello = self.hello
        assert hello is not None
        token = self._next_token(hello.led_token)
        t0 = self.host.send(p.Led(self.host.seq(), token, "deal", ("green",)))
        check(self._heartbeat_after(t0, lambda h: h.led_token == token, 1.0 * self.k) is not None,
              "the LED pattern was not shown")
        seen = self._heartbeat_after(t0, lambda h: h.led_token == 0, (NO_HOST_S + 1.5) * self.k)
        check(seen is not None, "the host's pattern stayed on with no host")
        assert seen is not None
        r.measured["no_host_after_s"] = round(seen.at - t0, 4)
        self._within(r, seen.at - t0 <= NO_HOST_S * self.k + 1.0, f"dropped after {seen.at - t0:.2f} s (limit 3.1 s plus "
              "one heartbeat)")
        check(seen.at - t0 >= 3.0 - 0.05, f"dropped after {seen.at - t0:.2f} s, before the 3 s")

    @_case("power-cycle", "after a power cycle: an unasked HELLO, a new boot id, the sequence goes on, kept counters "
                          "reported (sections 3, 12)")
    def t_power_cycle(self, r: Result) -> None:
        hello = self.hello
        assert hello is not None
        t0 = time.monotonic()
        if not self.operator.request("power-cycle").done:
            raise Skip("needs an operator who power-cycles the shoe (--operator)")
        self.host.close()
        after = self._reopen()
        r.measured["back_after_s"] = round(time.monotonic() - t0, 3)
        check(after.boot_id != hello.boot_id, "same boot id after a power cycle")
        check(after.seq >= hello.seq, f"next_seq went back: {hello.seq} -> {after.seq}")
        if hello.boot_count is not None:
            check(after.boot_count is not None and after.boot_count > hello.boot_count,
                  "boot_count did not go up")
            check(after.epoch == hello.epoch, "a shoe with persistent counters lost its epoch")
            check(after.card_total is not None and hello.card_total is not None
                  and after.card_total >= hello.card_total, "card_total went back")

    @_case("unplug", "unplugged and plugged back: same boot, held events kept and resent (section 6)")
    def t_unplug(self, r: Result) -> None:
        hello = self.hello
        assert hello is not None
        done, _ = self._pull()
        card = self._card(done)
        if not self.operator.request("unplug").done:
            raise Skip("needs an operator who unplugs the shoe (--operator)")
        self.host.close()
        if not self.operator.request("replug").done:
            raise Skip("needs an operator who plugs the shoe back (--operator)")
        after = self._reopen()
        r.measured["first_seq_after"] = after.first_seq
        check(after.boot_id == hello.boot_id, "the boot id changed on an unplug")
        check(after.first_seq <= card.msg.seq, "the held CARD was lost on the unplug")

    @_case("foreign-card", "a card of no enrolled deck: CARD 0xFF, then FOREIGN naming its tag to a host whose "
                           "first ACK took names-foreign, the misread FAULT to one whose ACK did not; then the "
                           "misread's end (section 16)")
    def t_foreign_card(self, r: Result) -> None:
        hello = self.hello
        assert hello is not None
        if "names-foreign" not in (hello.caps or ()):
            raise Skip("the shoe does not offer names-foreign (section 16)")
        for takes in (True, False):
            again, _ = self.host.hello(1.0 * self.k)  # a new connection: its first ACK decides
            self.host.send(p.Ack(self.host.seq(), again.seq - 1, again.seq, False, takes))
            self.host.poll(0.05 * self.k)
            asked = time.monotonic()
            if not self.operator.request("pull-foreign").done:
                raise Skip("needs an operator who pulls a card of no enrolled deck (pull-foreign)")
            card = self._card(asked).msg
            assert isinstance(card, p.CardMsg)
            check(card.card is None and card.reader == "none", f"CARD {card.seq} of a foreign card is not unreadable")
            seq = card.seq
            named = self.host.wait_for(_event_at(seq + 1, p.ForeignMsg, p.FaultMsg), 1.0 * self.k, after=asked)
            end = self.host.wait_for(_event_at(seq + 2, p.FaultMsg), 1.0 * self.k, after=asked)
            check(named is not None and end is not None, f"no event {seq + 1} and {seq + 2} after the foreign CARD")
            assert named is not None and end is not None
            form = "FOREIGN" if takes else "FAULT misread"
            if takes:
                msg = named.msg
                check(isinstance(msg, p.ForeignMsg) and msg.what == "unknown" and msg.card is None,
                      f"event {seq + 1} is {msg}, expected FOREIGN unknown for a host that took it")
                assert isinstance(msg, p.ForeignMsg)
                r.measured["tag"] = msg.tag.hex()
            else:
                msg = named.msg
                check(isinstance(msg, p.FaultMsg) and msg.kind == "misread" and not msg.cleared and msg.detail != "",
                      f"event {seq + 1} is {msg}, expected a misread naming the card for a host that did not take it")
                check(not any(isinstance(s.msg, p.ForeignMsg) for s in self.host.since(asked)),
                      "a FOREIGN reached a host whose ACK did not take it")
            check(isinstance(end.msg, p.FaultMsg) and end.msg.kind == "misread" and end.msg.cleared,
                  f"event {seq + 2} is {end.msg}, expected the misread's end after the {form}")
            r.measured["named_after_card_s" if takes else "misread_after_card_s"] = round(named.at - card_at(
                self.host, seq), 4)
            self.host.ack_all(seq + 3)
            self.host.poll(0.05 * self.k)

    def _reopen(self) -> p.Hello:
        """Open the port again (retried for 5 s: the device node comes back after a power cycle
        or a replug) and return the shoe's HELLO.

        :raises serial.SerialException: the port did not come back in time.
        """
        end = time.monotonic() + 5.0 * self.k
        while True:
            try:
                self.host.open()
                break
            except (serial.SerialException, OSError):
                if time.monotonic() > end:
                    raise
                time.sleep(0.05)
        after, _ = self.host.hello(2.0 * self.k)
        return after

    # -------------------------------------------------------------- the report

    def report(self) -> dict[str, Any]:
        """The report: kit and protocol version, the shoe's identity, each test's result, totals."""
        h = self.identity or self.hello
        shoe = None if h is None else {
            "url": self.url, "serial": h.serial, "firmware": h.firmware, "boot_id": f"{h.boot_id:08x}",
            "protocol": h.version, "version_range": [h.version_min, h.version_max], "readers": list(h.readers),
            "caps": None if h.caps is None else list(h.caps), "boot_count": h.boot_count}
        counts = {s: sum(r.status == s for r in self.results) for s in ("passed", "failed", "skipped")}
        return {"kit": KIT_VERSION, "protocol": self.protocol, "time_scale": self.k, "timed": self.timed,
                "operator_budget_s": self.budget, "shoe": shoe,
                "started": round(getattr(self, "started", time.time()), 3), "summary": counts,
                "results": [asdict(r) for r in self.results]}


def junit_xml(report: dict[str, Any]) -> str:
    """The report as JUnit XML (one testsuite; the shoe's identity and the protocol version as
    properties)."""
    s = report["summary"]
    suite = ET.Element("testsuite", name="shoe-conformance", tests=str(sum(s.values())), failures=str(s["failed"]),
                       skipped=str(s["skipped"]), errors="0",
                       time=f"{sum(r['seconds'] for r in report['results']):.3f}")
    props = ET.SubElement(suite, "properties")
    for key, value in [("kit", report["kit"]), ("protocol", report["protocol"]), ("time_scale", report["time_scale"]),
                       ("timed", report["timed"]), *(("shoe." + k, v) for k, v in (report["shoe"] or {}).items())]:
        ET.SubElement(props, "property", name=str(key), value=json.dumps(value) if not isinstance(value, str)
                      else value)
    for r in report["results"]:
        case = ET.SubElement(suite, "testcase", classname="shoe", name=r["name"], time=f"{r['seconds']:.3f}")
        if r["status"] == "failed":
            ET.SubElement(case, "failure", message=r["message"]).text = r["doc"]
        elif r["status"] == "skipped":
            ET.SubElement(case, "skipped", message=r["message"])
        out = ET.SubElement(case, "system-out")
        out.text = json.dumps(r["measured"])
    return ET.tostring(suite, encoding="unicode")


def virtual_bench(shoe: Any) -> CallableOperator:
    """The operator of a :class:`~hil.virtual_shoe.VirtualShoe`: its own pull, power cycle, unplug
    and replug, as a bench robot would do them on a real shoe."""

    def pull() -> float:
        at = time.time()
        if shoe.remaining() < 1:
            shoe.reload(list(shoe.dispensed))
        shoe.pull()
        return at

    def cycle() -> None:
        shoe.reboot(lose_unacked=True, away_s=0.5)
        time.sleep(0.6)

    return CallableOperator({"pull-card": pull, "power-cycle": cycle,
                             "unplug": lambda: shoe.unplug(), "replug": lambda: shoe.replug()})


def run_kit(url: str, *, operator_command: str | None = None, operator: Operator | None = None,
            time_scale: float = 1.0, operator_budget: float = 0.0, protocol: int = 1,
            secret: bytes | None = None, timed: bool = True) -> dict[str, Any]:
    """Run the kit against ``url`` and return the report. ``url`` ``virtual`` starts a virtual
    shoe on a pty (closed afterwards), a ``vshoe://`` URL uses that virtual shoe; both come with
    their bench (:func:`virtual_bench`). ``bridge-virtual`` starts the shoe bridge on a virtual
    PN532 and a mock beam, its bench the operator that drives them
    (:meth:`hil.reader_shoe.ReaderShoe.bench_actions`). Otherwise ``operator_command`` (a
    :class:`CommandOperator`) or ``operator`` does what a person or robot must."""
    shoe = None
    own: Any = None
    if url == "bridge-virtual":  # the shoe bridge on a virtual PN532 and a mock beam

        if protocol == p.AUTH_VERSION and secret is None:
            secret = os.urandom(32)  # the kit pairs the bridge it starts
        own = temporary_reader_shoe(secret=secret if protocol == p.AUTH_VERSION else None)
        url = own.url
        operator = operator or CallableOperator(own.bench_actions())
    elif url == "virtual":
        if protocol == p.AUTH_VERSION and secret is None:
            secret = os.urandom(32)  # the kit pairs its own virtual shoe
        own = shoe = VirtualShoe(Deck.seeded(0), secret=secret if protocol == p.AUTH_VERSION else None).start()
        url = shoe.url
    elif url.lower().startswith("vshoe://"):
        shoe = device_for_url(url)
        if protocol == p.AUTH_VERSION and secret is None:
            secret = shoe.secret
    if operator is None:
        operator = (virtual_bench(shoe) if shoe is not None else
                    CommandOperator(operator_command) if operator_command else Operator())
    try:
        if protocol == p.AUTH_VERSION and secret is None:
            raise ValueError("protocol 2 needs the shoe's pairing secret")
        return Kit(url, operator, time_scale=time_scale, operator_budget=operator_budget,
                   secret=secret if protocol == p.AUTH_VERSION else None, timed=timed).run()
    finally:
        if own is not None:
            own.close()
