"""The shoe's boot the journal last knew (``Journal.last_shoe_boot``): what a restarted service
hands the link so that a shoe restarted while the service was down is still a shoe restart
(docs/protocol.md section 12)."""

from __future__ import annotations

from pathlib import Path

from shoe_ctl.events import LinkChanged, LinkStatus, ShoeInfo
from shoe_ctl.service.journal import Journal


def test_the_last_link_change_that_names_a_boot_is_the_one_kept(tmp_path: Path) -> None:
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as j:
        assert j.last_shoe_boot() is None
        j.append(LinkChanged(LinkStatus.CONNECTED, "shoe S1", ShoeInfo(2, "fw", "S1", ("rfid",), 0x1111)))
        j.append(LinkChanged(LinkStatus.CONNECTED, "shoe S1 restarted", ShoeInfo(2, "fw", "S1", ("rfid",), 0x2222)))
        j.append(LinkChanged(LinkStatus.DISCONNECTED, "cable"))  # names no shoe
        j.append(LinkChanged(LinkStatus.CONNECTED, "refused", ShoeInfo(2, "fw", "X9", ("rfid",), 0x3333),
                             refused="unknown-shoe"))  # a refused shoe is not the table's
        assert j.last_shoe_boot() == ("S1", 0x2222)
