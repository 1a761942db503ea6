"""A host without the shoe's secret (a new host, a wiped key file, a bench's unauthenticated
link) before a paired shoe, through the real pty: the shoe's sealed frames are counted, never
acted on, and the link and ``shoe-ctl doctor`` say the shoe is paired with a secret this host does
not have instead of asking about power and baud rate (docs/protocol.md section 14, "A host
without the secret")."""

from __future__ import annotations

import queue
import re
from pathlib import Path
from typing import Any

import pytest

from drivers.link_health import no_secret
from drivers.shoe import ShoeLink
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.cli import doctor
from shoe_ctl.config import ShoeConfig, TableConfig
from shoe_ctl.events import CardRead, LinkChanged, LinkStatus
from shoe_ctl.service.shoe_secrets import new_secret


@pytest.fixture
def paired_shoe() -> Any:
    shoe = VirtualShoe(transport="pty", secret=new_secret(), serial="VS-0007").start()
    try:
        yield shoe
    finally:
        shoe.close()


@pytest.mark.parametrize("key_file", [None, "/srv/keys/VS-0007.key"])
def test_a_link_without_the_secret_counts_the_sealed_frames_and_names_the_cause(paired_shoe: VirtualShoe,
                                                                                 key_file: str | None) -> None:
    events: queue.Queue[Any] = queue.Queue()
    link = ShoeLink(paired_shoe.url, events, silence_s=1.0, key_file=key_file)
    seen: list[Any] = []
    try:
        link.start()
        paired_shoe.pull()  # a card the host must not take from frames it cannot check
        while not any(isinstance(e, LinkChanged) and e.status is LinkStatus.DISCONNECTED for e in seen):
            seen.append(events.get(timeout=10))
        stats = link.stats
        assert not link.connected
    finally:
        link.close()
    (down,) = [e for e in seen if isinstance(e, LinkChanged)]
    assert no_secret(key_file) in down.detail and "no HELLO" in down.detail and "powered" not in down.detail
    assert "docs/install-pi.md" in down.detail and (key_file or "<serial>.key") in down.detail
    counted = re.search(r"\((\d+) sealed frames unchecked, 0 bad frames", down.detail)
    assert counted is not None and 0 < int(counted.group(1)) <= stats.sealed_unchecked
    assert stats.bad_frames == 0 and stats.frames_in == 0 and stats.delivered == 0  # nothing acted on
    assert not any(isinstance(e, CardRead) for e in seen) and paired_shoe.unacked_count() == 1


@pytest.mark.parametrize("auth", ["hmac", "off"])
def test_doctor_names_a_paired_shoe_it_has_no_secret_for(paired_shoe: VirtualShoe, tmp_path: Path,
                                                         auth: str) -> None:
    secrets = tmp_path / "shoes"  # a wiped key file (hmac), or a bench host that never had one (off)
    cfg = TableConfig(shoe=ShoeConfig(url=str(paired_shoe.url), serial="VS-0007", auth=auth, secrets=str(secrets)))
    check = doctor.check_handshake(cfg, True, timeout=3.0)
    assert check.status == "fail" and doctor.SEALED_SHOE in check.detail and "sealed frames" in check.detail
    assert "baud" not in check.fix and f"restore the key file {secrets / 'VS-0007.key'}" in check.fix
    assert "pair it again (docs/install-pi.md, 4b)" in check.fix
    assert paired_shoe.device.host_frames == 0  # the shoe took nothing from the host either


def test_doctor_says_nothing_of_sealed_frames_for_an_unpaired_shoe(tmp_path: Path) -> None:
    with VirtualShoe(transport="pty", serial="VS-0008") as shoe:
        cfg = TableConfig(shoe=ShoeConfig(url=str(shoe.url), serial="VS-0008", secrets=str(tmp_path / "shoes")))
        check = doctor.check_handshake(cfg, True, timeout=3.0)
    assert check.status == "fail" and "not paired" in check.detail and doctor.SEALED_SHOE not in check.detail
    assert "pairing mode" in check.fix


def test_a_bench_table_names_the_key_file_it_would_read(paired_shoe: VirtualShoe, tmp_path: Path) -> None:
    from test_hil_dealer_stops import PROFILES, Journal
    from waiting import wait_for

    from shoe_ctl.machine import Dealing
    from shoe_ctl.table import Table

    machine = Dealing(PROFILES)
    cfg = TableConfig(shoe=ShoeConfig(url=str(paired_shoe.url), serial="VS-0007", auth="off",
                                      secrets=str(tmp_path / "shoes")))
    with Table.from_config(cfg, profiles=PROFILES, shoe_url=str(paired_shoe.url), machine=machine,
                           journal=Journal(), display=None, sinks=[]) as t:
        assert t.link is not None and t.link.auth == "off"
        key = str(tmp_path / "shoes" / "VS-0007.key")
        assert wait_for(lambda: no_secret(key) in machine.link.detail, 10), machine.link.detail
        assert not t.link.connected and t.link.stats.sealed_unchecked > 0
