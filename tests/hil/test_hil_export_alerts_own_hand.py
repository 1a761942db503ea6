"""HIL: an exported hand's ``_alerts`` hold the alerts raised in that hand only: one raised after
its *hand complete* (an input refused with no hand running, a link's sequence reset at the next
start) belongs to no hand, and the next hand's own alerts are its own."""

from __future__ import annotations

from pathlib import Path

from irregular_help import PROFILES, deck, run

from hil.dealer import HandScript, Irregularity
from shoe_ctl.events import DealerAction, DealerInput, LinkChanged, LinkStatus
from shoe_ctl.export import replay_hands
from shoe_ctl.machine import Dealing
from shoe_ctl.service.journal import Journal


def test_an_alert_raised_between_hands_is_in_no_hands_alerts(tmp_path: Path) -> None:
    first = HandScript([1, 2, 3], "stud", "house", deck([]), {}, irregular=[Irregularity("card-count", "7th", 2,
                                                                                           args={"cards": 7})])
    log: list = []
    run([first], log=log)
    # between hands: an input refused with no hand running, the link's sequence numbers going back
    log.append(DealerInput(DealerAction.FOLD, 2))
    log.append(LinkChanged(LinkStatus.CONNECTED, "restarted", sequence_reset=True))
    with Journal(tmp_path / "j.sqlite3", table="t", profile="house") as journal:
        for ev in log:
            journal.append(ev)
        (hand,) = [h for h in replay_hands(journal, lambda p: Dealing(PROFILES, default_rules=p)) if h.finished]
    codes = [a.split(":", 1)[0] for a in hand.alerts]
    assert "input-wrong-time" not in codes and "shoe-sequence-reset" not in codes
