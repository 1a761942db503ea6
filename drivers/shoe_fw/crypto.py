"""HMAC-SHA256 (RFC 2104) on ``hashlib`` alone, as CircuitPython provides it.

CircuitPython has ``hashlib`` (SHA-256 from 10.1 on: :func:`check_sha256`) but no ``hmac`` module, so the
firmware builds HMAC from the hash: ``H((K ^ opad) || H((K ^ ipad) || m))`` with a 64-byte
block. Used for version 2's MACs and keys (docs/protocol.md section 14) and the deck map's seal
(docs/build-a-shoe.md, "Deck map").
"""

import hashlib

BLOCK = 64
"""SHA-256's block size (bytes)."""


NEEDS = "CircuitPython 10.1 or later"
"""The first CircuitPython whose ``hashlib.new`` makes SHA-256 (9.x and 10.0 make SHA-1 only)."""


def check_sha256() -> None:
    """Refuse to start on a ``hashlib`` without SHA-256, which every MAC and deck seal needs.

    :raises RuntimeError: naming the CircuitPython the firmware needs.
    """
    try:
        sha256(b"")
    except ValueError:  # CircuitPython's hashlib.new for an algorithm it does not make
        raise RuntimeError("this hashlib has no SHA-256 (the shoe's MACs and deck seals need it): install " + NEEDS +
                           " on the board (docs/build-a-shoe.md, Flashing the RP2040)") from None


def sha256(data: bytes) -> bytes:
    """SHA-256 of ``data`` (bytes) -> 32 bytes."""
    h = hashlib.new("sha256")
    h.update(data)
    return h.digest()


class HmacKey:
    """A key made ready once: the padded inner and outer blocks, so each MAC only hashes.

    :param key: bytes of any length (a key longer than the block is hashed first).
    """

    def __init__(self, key: bytes) -> None:
        key = bytes(key)
        if len(key) > BLOCK:
            key = sha256(key)
        key = key + bytes(BLOCK - len(key))
        self._inner = bytes([b ^ 0x36 for b in key])
        self._outer = bytes([b ^ 0x5C for b in key])

    def digest(self, *parts: bytes) -> bytes:
        """HMAC-SHA256 of the concatenation of ``parts`` (bytes each) -> 32 bytes."""
        h = hashlib.new("sha256")
        h.update(self._inner)
        for part in parts:
            h.update(part)
        inner = h.digest()
        h = hashlib.new("sha256")
        h.update(self._outer)
        h.update(inner)
        return h.digest()


def hmac_sha256(key: bytes, *parts: bytes) -> bytes:
    """HMAC-SHA256(``key``, concatenation of ``parts``) -> 32 bytes."""
    return HmacKey(key).digest(*parts)


def same(a: bytes, b: bytes) -> bool:
    """True when the byte strings ``a`` and ``b`` are equal, in a time that does not depend on
    where they first differ (a MAC or a seal compared with what came)."""
    if len(a) != len(b):
        return False
    diff = 0
    for i in range(len(a)):
        diff |= a[i] ^ b[i]
    return diff == 0
