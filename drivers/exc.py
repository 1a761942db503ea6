"""The errors of the shoe drivers, in one module: :class:`ShoeError` and below it one class per
kind of failure, each also the matching builtin (``ValueError``, ``ConnectionError``,
``TimeoutError``) so a caller may catch either. Transport errors (``serial.SerialException``,
``OSError``) are translated at the driver's edge and never escape the link's reader thread
(docs/protocol.md, section 7)."""

from __future__ import annotations


class ShoeError(Exception):
    """Base of every error raised by the shoe drivers and the virtual shoe."""


class FrameError(ShoeError, ValueError):
    """A frame that fails COBS decoding, the length limits or the CRC.

    :param reason: a short machine-readable cause: ``"cobs"``, ``"short"``, ``"long"``, ``"crc"``.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class MessageError(ShoeError, ValueError):
    """A frame whose CRC is right but whose message breaks protocol v1 (length or a value).

    :param rule: the id of the broken row of the receiver's constraint table
        (``docs/protocol.md`` section 11, e.g. ``"C-READER"``); ``""`` when not a table row.
    """

    def __init__(self, message: str, rule: str = "") -> None:
        super().__init__(message)
        self.rule = rule


class UnknownMessageError(MessageError):
    """A frame with a valid CRC and a message type this protocol version does not define."""

    def __init__(self, msg_type: int) -> None:
        super().__init__(f"unknown message type 0x{msg_type:02x}")
        self.msg_type = msg_type


class VersionError(ShoeError, ValueError):
    """The shoe and the host share no protocol version."""


class LinkClosedError(ShoeError, ConnectionError):
    """The link (or the virtual shoe) was closed; it cannot be used again."""


class NotConnectedError(ShoeError, ConnectionError):
    """The shoe is not connected right now (unplugged, rebooting, never answered)."""


class ShoeTimeoutError(ShoeError, TimeoutError):
    """A wait for the shoe or the link ran out of time."""


class FaultSpecError(ShoeError, ValueError):
    """A fault-injection spec (e.g. ``corrupt=0.01,unplug-every=1000``) that cannot be parsed."""


class ShoeUrlError(ShoeError, ValueError):
    """A shoe URL no pyserial handler opens (an unknown ``scheme://``): a configuration error,
    refused when the link is made rather than retried."""
