"""Shared helpers for byte-level tests of the sans-I/O shoe session and device: the published
test vectors (``tests/vectors/protocol_v1.json``, docs/protocol.md section 9) by name, and a
pump that joins a :class:`drivers.session.LinkSession` to a :class:`hil.shoe_device.ShoeDevice`
in memory, on a virtual clock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from drivers import protocol as p
from drivers.session import LinkSession
from hil.faults import LineNoise
from hil.shoe_device import ShoeDevice

ROOT = Path(__file__).resolve().parents[2]
VECTORS: dict[str, dict[str, Any]] = {
    v["name"]: v for v in json.loads((ROOT / "tests" / "vectors" / "protocol_v1.json").read_text())["vectors"]}


def frame(name: str) -> bytes:
    """The on-the-line bytes of the vector ``name`` (``0x00 COBS(body) 0x00``)."""
    return bytes.fromhex(VECTORS[name]["frame"])


def message(name: str) -> p.Message:
    """The message of the vector ``name``, from its fields."""
    return p.message_from_json(VECTORS[name]["message"])


def decode_all(frames: list[bytes]) -> list[p.Message]:
    """Every message in ``frames`` (each a whole frame)."""
    return p.FrameDecoder().feed(b"".join(frames))


class Pump:
    """A host session and a shoe device joined by an in-memory line, on a clock in seconds that
    only :meth:`run` moves. ``noise``: optional line noise for each direction (shoe->host,
    host->shoe)."""

    def __init__(self, session: LinkSession, device: ShoeDevice,
                 noise: tuple[LineNoise, LineNoise] | None = None, now: float = 0.0) -> None:
        self.session = session
        self.device = device
        self.noise = noise
        self.now = now
        self.events: list[Any] = []
        self.to_host = b""
        self.to_shoe = b""
        session.connection_made(now)
        device.plugged_in(now)

    def _carry(self) -> None:
        out = b"".join(self.device.frames_to_send())
        back = b"".join(self.session.frames_to_send())
        if self.noise is not None:
            out, back = self.noise[0].apply(out), self.noise[1].apply(back)
        self.to_host += out
        self.to_shoe += back
        self.events += self.session.events()

    def step(self, dt: float = 0.001) -> None:
        """Move the clock by ``dt``, deliver the bytes in flight both ways, run both timers."""
        self.now += dt
        self._carry()
        data, self.to_shoe = self.to_shoe, b""
        if data:
            self.device.receive_data(data, self.now)
        data, self.to_host = self.to_host, b""
        if data:
            self.session.receive_data(data, self.now)
        if self.now >= self.device.next_deadline():
            self.device.tick(self.now)
        if self.now >= self.session.next_deadline():
            self.session.tick(self.now)
        self._carry()

    def run(self, seconds: float, dt: float = 0.001) -> None:
        """:meth:`step` until ``seconds`` have passed."""
        end = self.now + seconds
        while self.now < end:
            self.step(dt)
