"""HIL: a service started again on the same journal with the simulated shoe (through the pty and
the link) numbers its hands on from the journal's last, so hand numbers never repeat in a journal
(and an export finds every hand); a hand left open by the first run is not numbered again."""

from __future__ import annotations

from pathlib import Path

from rule_profiles import PROFILES

from shoe_ctl.config import TableConfig
from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.service import shoes
from shoe_ctl.service.journal import Journal
from shoe_ctl.table import Table


def _run_one_hand(path: Path, *, complete: bool) -> int:
    """Start the table on ``path`` with the simulated shoe, start a hand (and with ``complete``
    end it as a misdeal), stop; the number of the hand started."""
    with Table.from_config(TableConfig(), profiles=PROFILES, shoe_url=shoes.SIM, seed=3, journal=str(path),
                           dealer_io=False, wait_connected=10.0) as t:
        t.controller.post(DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2, 3]}))
        assert t.controller.wait_idle(10)
        number = t.machine.hand_no
        if complete:
            t.controller.post(DealerInput(DealerAction.MISDEAL, None, {"confirm": True}))
            assert t.controller.wait_idle(10)
    return int(number)


def test_hand_numbers_never_repeat_across_runs_with_the_simulated_shoe(tmp_path: Path) -> None:
    path = tmp_path / "table.journal"
    first = _run_one_hand(path, complete=True)
    second = _run_one_hand(path, complete=False)  # left open: the next run does not reuse it
    third = _run_one_hand(path, complete=True)
    assert (first, second, third) == (1, 2, 3)
    with Journal(path, table=TableConfig().table, profile="tda") as j:
        numbers = [h.hand for h in j.hands()]
    assert numbers == sorted(set(numbers)) and set(numbers) == {1, 2, 3}
