"""The Pepper C1 reader module: an Eccel Pepper C1 (USB serial) through Eccel's ``pepper_c1`` driver.

The second reader family behind the reader seam (:mod:`shoe_fw.reader`), for cards sold with
ISO 15693 tags (ICODE SLIX, 8-byte UIDs), which a PN532 cannot read; the C1 reads ISO/IEC 14443
A tags too. It runs on the Pi bridge (the C1 is a USB device; the driver opens the port with
pyserial). The driver frames each command as ``F5 LEN_L LEN_H ~LEN_L ~LEN_H payload CRC16``
and answers with ``00 cmd data`` (ACK) or ``FF cmd code`` (error): ``start()`` asks
GET_VERSION and keeps the answer; ``scan()`` is GET_TAG_COUNT then GET_UID for each tag (up to
2; a UID is the answer after its type and parameter bytes); ``check()`` asks GET_VERSION again
and any other answer than the first (a stale one) is an error; ``reset()`` sends REBOOT, opens
the port again and starts again. The C1 has no reset line on its USB cable: a C1 that does not
answer a REBOOT stays dead until it is unplugged. Every failure is a
:class:`shoe_fw.reader.ReaderError` naming the command. docs/build-a-shoe.md, "Reader modules".
"""

try:
    from typing import Any
except ImportError:  # CircuitPython: annotations only
    pass

from ..reader import ReaderError

MAX_TARGETS = 2
"""The most tags a scan reports (two at the mouth is already a double pull)."""


class PepperC1Reader:
    """A Pepper C1 on a serial port.

    :param port: the serial device (``/dev/ttyACM0``, ``/dev/serial/by-id/...``).
    :param timeout: seconds to wait for each answer.
    :param read_timeout: the port's read timeout (the driver reads in chunks of this wait).
    :param name: the module's name in messages.
    """

    def __init__(self, port: str, timeout: float = 0.3, read_timeout: float = 0.005, name: str = "pepper-c1") -> None:
        self.name = name
        self.port = port
        self._timeout = timeout
        self._read_timeout = read_timeout
        self._transport = None  # type: Any
        self._client = None  # type: Any
        self.version = None  # type: str | None

    def _error(self, what: str, detail: str) -> ReaderError:
        return ReaderError(self.name + ": " + what + ": " + detail)

    def _call(self, what: str, fn: "Any", *args: "Any") -> "Any":
        if self._client is None:
            raise self._error(what, "not started")
        try:
            return fn(*args)
        except ReaderError:
            raise
        except TimeoutError:
            raise self._error(what, "no answer") from None
        except Exception as exc:  # the driver's CommandError, ProtocolError, TransportError
            raise self._error(what, type(exc).__name__ + ": " + str(exc)) from None

    def _close(self) -> None:
        transport, self._transport, self._client = self._transport, None, None
        if transport is not None:
            try:
                transport.close()
            except Exception:  # a port that is gone already
                pass

    def start(self) -> None:
        """Open the port and ask the reader's version.

        :raises ReaderError: no driver, the port cannot be opened, no answer or an empty one.
        """
        try:
            from pepper_c1 import PepperC1, UARTTransport
        except ImportError as exc:
            raise self._error("start", "the pepper_c1 library is missing (" + str(exc) + ")") from None
        self._close()
        try:
            self._transport = UARTTransport(self.port, timeout=self._read_timeout)
        except Exception as exc:
            raise self._error("open " + self.port, str(exc)) from None
        self._client = PepperC1(self._transport, response_timeout=self._timeout)
        version = self._call("GET_VERSION", self._client.get_version)
        if not version:
            raise self._error("GET_VERSION", "an empty answer")
        self.version = version

    def scan(self) -> "list[bytes]":
        """The UIDs of the tags in the field now (0, 1 or 2).

        :raises ReaderError: no answer, an error answer, or a UID answer too short.
        """
        client = self._client
        count = self._call("GET_TAG_COUNT", client.get_tag_count if client else None)
        uids = []
        for index in range(min(count, MAX_TARGETS)):
            info = self._call("GET_UID", client.get_uid, index)
            if len(info) < 2 + 4:
                raise self._error("GET_UID", "an answer of " + str(len(info)) + " bytes, no UID in it")
            uids.append(bytes(info[2:]))
        return uids

    def check(self) -> None:
        """GET_VERSION; the answer must be the one :meth:`start` got.

        :raises ReaderError: no answer, or another answer (a stale one).
        """
        client = self._client
        version = self._call("GET_VERSION", client.get_version if client else None)
        if version != self.version:
            raise self._error("GET_VERSION", "answered " + repr(version) + ", not " + repr(self.version))

    def reset(self) -> None:
        """REBOOT (its answer is not waited for long), then open and :meth:`start` again.

        :raises ReaderError: the reader does not answer after it.
        """
        client = self._client
        if client is not None:
            try:
                client.reboot()
            except Exception:  # a hung reader does not answer its REBOOT either
                pass
        self.start()
