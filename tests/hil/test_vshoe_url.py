"""The virtual shoe as a pyserial URL (``vshoe://``) and the ``sim`` alias (docs/service.md)."""

from __future__ import annotations

from typing import Any

import pytest
import serial

from hil.urlhandler import protocol_vshoe
from shoe_ctl.service import shoes


def test_sim_is_resolved_to_a_new_vshoe_url_and_other_urls_pass() -> None:
    a, b = shoes.resolve("sim", seed=4), shoes.resolve("sim", seed=4, faults="drop=0.1")
    assert a.startswith("vshoe://") and a != b
    assert protocol_vshoe.parse(a) == {"seed": 4, "faults": None, "serial": None, "secret": None}
    assert protocol_vshoe.parse(b) == {"seed": 4, "faults": "drop=0.1", "serial": None, "secret": None}
    assert shoes.resolve("/dev/ttyUSB0") == "/dev/ttyUSB0"
    assert shoes.is_simulated("sim") and shoes.is_simulated(a)
    assert not shoes.is_simulated("/dev/ttyUSB0") and not shoes.is_simulated("socket://127.0.0.1:9")


def test_serial_for_url_opens_the_virtual_shoe_and_reopens_the_same_one() -> None:
    shoes.register_url_handlers()
    url = shoes.resolve("sim", seed=1)
    try:
        device = shoes.device(url)
        assert device is shoes.device(url) and device is protocol_vshoe.device_for_url(url)
        port = serial.serial_for_url(url, timeout=2)
        try:
            assert port.port == device.url  # the shoe's own pty, opened by the plain serial class
            assert port.read(1) == b"\x00"  # the shoe's first frame (its hello or a heartbeat) starts
        finally:
            port.close()
        again = serial.serial_for_url(url, timeout=0.5)
        assert again.port == device.url
        again.close()
    finally:
        shoes.release(url)
    assert shoes.device(url) is not device  # released: a new shoe on next use
    shoes.release(url)


@pytest.mark.parametrize("url", ["vshoe://x?seed=one", "vshoe://x?speed=3"])
def test_a_bad_vshoe_url_says_what_is_wrong(url: str) -> None:
    with pytest.raises(ValueError, match="seed|unknown option"):
        protocol_vshoe.device_for_url(url)


def test_a_vshoe_with_a_secret_file_speaks_authenticated_and_keeps_a_rotated_secret(tmp_path: Any) -> None:
    import os
    import queue

    from drivers.shoe import ShoeLink
    from shoe_ctl.service.shoe_secrets import SecretStore, new_secret

    store = SecretStore(tmp_path / "shoes")
    first = new_secret()
    path = store.save("VS-77", first)
    url = f"vshoe://auth-test?serial=VS-77&secret={path}"
    events: queue.Queue[Any] = queue.Queue()
    try:
        with ShoeLink(url, events, auto_ack=True, secret=first, serial="VS-77") as link:
            info = link.wait_connected()
            assert info.protocol == 2 and info.serial == "VS-77" and link.auth == "hmac"
            rotated = new_secret()
            link.pair(rotated)
        assert store.load("VS-77") == rotated and os.stat(path).st_mode & 0o077 == 0
        with ShoeLink(url, queue.Queue(), auto_ack=True, secret=first, serial="VS-77") as stale:
            with pytest.raises(TimeoutError):
                stale.wait_connected(1.0)  # the old secret opens nothing any more
    finally:
        protocol_vshoe.release(url)
