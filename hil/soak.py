"""``shoe-ctl hil soak``: many cards through the virtual shoe, the line, and :class:`ShoeLink`;
with ``--shoe URL`` through a real shoe whose cards an operator pulls (:func:`run_soak_real`,
:mod:`hil.operator`).

The shoe records every event it sends (by sequence number); a consumer thread checks every event
the link delivers against that record. Lost means sent and never delivered (events a rebooted
shoe dropped and the host reported as a :class:`~shoe_ctl.events.SequenceGap` are counted apart
as ``gap_reported``); duplicated means delivered twice; out of order means delivered after a
higher sequence; mismatched means delivered with other content than was sent.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import threading
import time
from array import array
from collections.abc import Callable
from typing import Any, TextIO

from drivers import protocol as p
from drivers.shoe import ShoeLink
from hil.deck import Deck
from hil.operator import OperatorError, OperatorHook, hook_from_spec
from hil.virtual_shoe import Faults, VirtualShoe
from shoe_ctl.events import (
    CardRead,
    LinkChanged,
    LinkStatus,
    SequenceGap,
    ShoeButton,
    ShoeFault,
    ShoeRestarted,
)

NO_CARD = -1
UNREAD = 52


class _Record:
    """What the shoe sent, by sequence (compact: 1M cards take a few MB)."""

    def __init__(self) -> None:
        self.code = array("b")      # card code, UNREAD, or NO_CARD (fault/button)
        self.dispense = array("l")
        self.lock = threading.Lock()

    def on_event(self, msg: p.EventMsg) -> None:
        with self.lock:
            while len(self.code) < msg.seq:
                self.code.append(NO_CARD)
                self.dispense.append(0)
            i = msg.seq - 1
            if isinstance(msg, p.CardMsg):
                self.code[i] = UNREAD if msg.card is None else msg.card.code
                self.dispense[i] = msg.dispense


def _consumer(events: queue.Queue[Any], done: threading.Event, check: Callable[[object], None]) -> threading.Thread:
    """A daemon thread (not started) that hands every event in ``events`` to ``check`` until
    ``done`` is set and the queue is empty."""

    def consume() -> None:
        while not done.is_set() or not events.empty():
            try:
                ev = events.get(timeout=0.05)
            except queue.Empty:
                continue
            check(ev)

    return threading.Thread(target=consume, name="soak-consumer", daemon=True)


def run_soak(cards: int, faults: Faults | str | None = None, seed: int = 0, *, transport: str = "pty",
             window: int = 256, stall_s: float = 60.0, progress: TextIO | None = None) -> dict[str, Any]:
    """Pull ``cards`` cards through the full serial stack and check every delivered event.

    :param cards: pulls (a double pull makes two card events of one pull).
    :param faults: a :class:`Faults` or spec string.
    :param window: the puller waits while the shoe holds more unacked events than this (a dealer
        cannot outrun the link by much either).
    :param stall_s: give up when nothing is delivered for this long after the last pull.
    :param progress: a text stream for one progress line every 10 %, or None.
    :returns: the result dict (see ``docs/protocol.md``, section 10): ``bad_frames`` counts
        frames the host dropped (line noise), ``bad_frames_at_shoe`` the host's frames the shoe
        dropped, ``shoe_faults`` and ``shoe_buttons`` the FAULT and BUTTON events the shoe
        reported and the host delivered, ``injected_faults`` the fault spec run.
    """
    faults = faults if isinstance(faults, Faults) else Faults.parse(faults)
    record = _Record()
    events: queue.Queue[Any] = queue.Queue()
    shoe = VirtualShoe(Deck.seeded(seed), transport=transport, faults=faults, seed=seed, record=False,
                       on_event=record.on_event)
    seen = bytearray()
    counts = {"delivered": 0, "duplicated": 0, "out_of_order": 0, "mismatched": 0, "faults": 0,
              "buttons": 0, "disconnects": 0, "degraded": 0, "restarts": 0, "restart_unreported": 0,
              "restart_unknown": 0}
    gaps: list[tuple[int, int]] = []
    last_seq = [0]
    last_link = [""]
    done = threading.Event()

    def check(ev: object) -> None:
        if isinstance(ev, CardRead | ShoeFault | ShoeButton):
            seq = ev.seq
            if seq < last_seq[0]:
                counts["out_of_order"] += 1
            last_seq[0] = max(last_seq[0], seq)
            while len(seen) < seq:
                seen.append(0)
            if seen[seq - 1]:
                counts["duplicated"] += 1
                return
            seen[seq - 1] = 1
            with record.lock:
                sent_code = record.code[seq - 1] if seq <= len(record.code) else None
                sent_disp = record.dispense[seq - 1] if seq <= len(record.dispense) else None
            if isinstance(ev, CardRead):
                code = UNREAD if ev.card is None else ev.card.code
                if code != sent_code or ev.dispense != sent_disp:
                    counts["mismatched"] += 1
                counts["delivered"] += 1
            elif sent_code != NO_CARD:
                counts["mismatched"] += 1
            else:
                counts["faults" if isinstance(ev, ShoeFault) else "buttons"] += 1
        elif isinstance(ev, SequenceGap):
            gaps.append((ev.expected, ev.got))
        elif isinstance(ev, ShoeRestarted):
            counts["restarts"] += 1
            if ev.unreported is None:
                counts["restart_unknown"] += 1
            else:
                counts["restart_unreported"] += ev.unreported
        elif isinstance(ev, LinkChanged):
            last_link[0] = f"{ev.status}: {ev.detail}"
            if ev.status == LinkStatus.DISCONNECTED:
                counts["disconnects"] += 1
            elif ev.status == LinkStatus.DEGRADED:
                counts["degraded"] += 1

    consumer = _consumer(events, done, check)
    t0 = time.monotonic()
    shoe.start()
    link = ShoeLink(shoe.url, events, auto_ack=True)
    consumer.start()
    link.start()
    try:
        link.wait_connected(10.0)
        reloads = 0
        step = max(1, cards // 10)
        next_report = time.monotonic() + 10.0
        for n in range(1, cards + 1):
            if shoe.remaining() < 2:
                reloads += 1
                shoe.reload(Deck.seeded(seed * 1_000_003 + reloads))
            while shoe.unacked_count() > window:
                time.sleep(0.0005)
                if progress is not None and time.monotonic() > next_report:
                    next_report = time.monotonic() + 10.0
                    print(f"soak: waiting at {n}/{cards}: {shoe.unacked_count()} unacked; link "
                          f"{last_link[0]}; {link.stats}", file=progress, flush=True)
            shoe.pull()
            if progress is not None and (n % step == 0 or time.monotonic() > next_report):
                next_report = time.monotonic() + 10.0
                print(f"soak: {n}/{cards} pulled, {counts['delivered']} delivered, "
                      f"{time.monotonic() - t0:.1f} s", file=progress, flush=True)
        with record.lock:
            sent_cards = sum(1 for c in record.code if c != NO_CARD)
        last_count, last_change = -1, time.monotonic()
        while True:
            got = counts["delivered"]
            if got != last_count:
                last_count, last_change = got, time.monotonic()
            if shoe.unacked_count() == 0 and got + _lost_to_gaps(record, gaps, seen) >= sent_cards:
                break
            if time.monotonic() - last_change > stall_s:
                break
            time.sleep(0.01)
    finally:
        link.close()
        done.set()
        consumer.join(10.0)
        shoe.close()
    seconds = time.monotonic() - t0
    stats = link.stats
    with record.lock:
        total = len(record.code)
        sent_cards = sum(1 for c in record.code if c != NO_CARD)
    missing = [s for s in range(1, total + 1) if (s > len(seen) or not seen[s - 1])]
    covered = [s for s in missing if any(a <= s < b for a, b in gaps)]
    missing_cards = [s for s in missing if record.code[s - 1] != NO_CARD]
    lost = sum(1 for s in missing_cards if not any(a <= s < b for a, b in gaps))
    return {
        "cards": cards,
        "sent": sent_cards,
        "delivered": counts["delivered"],
        "lost": lost,
        "duplicated": counts["duplicated"],
        "out_of_order": counts["out_of_order"],
        "mismatched": counts["mismatched"],
        "gap_reported": len(covered),
        "lost_on_reboot": shoe.lost_on_reboot,
        "bad_frames": stats.bad_frames,
        "bad_frames_at_shoe": shoe.host_bad_frames,
        "reconnects": stats.reconnects,
        "resends": shoe.resent,
        "resend_requests": stats.resends,
        "duplicates_dropped": stats.duplicates_dropped,
        "gaps": stats.gaps,
        "reboots": shoe.reboots,
        "restarts_alerted": counts["restarts"],
        "restart_unreported": counts["restart_unreported"],
        "restart_unknown": counts["restart_unknown"],
        "acks": stats.acks,
        "shoe_faults": counts["faults"],
        "shoe_buttons": counts["buttons"],
        "seconds": round(seconds, 3),
        "cards_per_s": round(cards / seconds, 1) if seconds else None,
        "injected_faults": _spec_text(faults),
        "seed": seed,
        "transport": transport,
    }


def run_soak_real(url: str, cards: int, hook: OperatorHook, *, batch: int = 10, deck_size: int = 52, baudrate: int = 115200,
                  stall_s: float = 60.0, connect_s: float = 10.0, progress: TextIO | None = None) -> dict[str, Any]:
    """Soak on a real shoe (or any shoe the run cannot pull itself): the operator hook
    (:mod:`hil.operator`) is asked to pull ``cards`` cards, ``batch`` at a time, and to reload a
    fresh deck every ``deck_size`` cards; every event the link delivers is checked.

    What the shoe sent is not known here, so a changed card cannot be seen; what is checked: every
    card asked for arrives (``lost``: asked and never delivered within ``stall_s``; ``extra``:
    delivered beyond what was asked, e.g. a double pull), no event twice (``duplicated``), none out
    of order, no card identity twice within one deck (``repeated_in_deck``: a misread, or a card
    from another deck), and the unread cards (``unread``) and the link's own counts.

    :param url: the shoe's pyserial URL. :param hook: an :class:`hil.operator.OperatorHook`.
    :param stall_s: give up on a batch when no card arrived for this long.
    :returns: the result dict (docs/service.md, *Rehearsing a real shoe by hand*); ``error`` when the shoe
        did not connect, the operator could not be asked, or a batch stalled.
    """
    events: queue.Queue[Any] = queue.Queue()
    counts = {"delivered": 0, "duplicated": 0, "out_of_order": 0, "repeated_in_deck": 0, "unread": 0,
              "faults": 0, "buttons": 0, "disconnects": 0, "gap_reported": 0}
    seen: set[int] = set()
    in_deck: set[int] = set()
    last_seq = [0]
    done = threading.Event()
    arrived = threading.Condition()

    def check(ev: object) -> None:
        if isinstance(ev, CardRead | ShoeFault | ShoeButton):
            if ev.seq in seen:
                counts["duplicated"] += 1
                return
            if ev.seq < last_seq[0]:
                counts["out_of_order"] += 1
            last_seq[0] = max(last_seq[0], ev.seq)
            seen.add(ev.seq)
            if isinstance(ev, CardRead):
                if ev.card is None:
                    counts["unread"] += 1
                elif ev.card.code in in_deck:
                    counts["repeated_in_deck"] += 1
                else:
                    in_deck.add(ev.card.code)
                with arrived:
                    counts["delivered"] += 1
                    arrived.notify_all()
            else:
                counts["faults" if isinstance(ev, ShoeFault) else "buttons"] += 1
        elif isinstance(ev, SequenceGap):
            counts["gap_reported"] += max(ev.got - ev.expected, 0)
        elif isinstance(ev, LinkChanged) and ev.status == LinkStatus.DISCONNECTED:
            counts["disconnects"] += 1

    consumer = _consumer(events, done, check)
    t0 = time.monotonic()
    link = ShoeLink(url, events, baudrate=baudrate, auto_ack=True)
    consumer.start()
    error = None
    asked = 0
    serial = None
    try:
        link.start()
        try:
            serial = link.wait_connected(connect_s).serial
        except Exception as exc:  # noqa: BLE001 - ShoeTimeoutError, an open that keeps failing
            error = f"the shoe at {url} did not connect within {connect_s:g} s ({exc})"
        deck, in_this_deck = 1, 0
        while error is None and asked < cards:
            k = min(batch, cards - asked, deck_size - in_this_deck)
            try:
                if k == 0:
                    deck += 1
                    hook.ask("reload", deck=deck)
                    in_deck.clear()
                    in_this_deck = 0
                    continue
                hook.ask("pull", count=k, first=asked + 1, last=asked + k, total=cards)
            except OperatorError as exc:
                error = str(exc)
                break
            asked += k
            in_this_deck += k
            with arrived:
                last, since = counts["delivered"], time.monotonic()
                while counts["delivered"] < asked:
                    arrived.wait(0.1)
                    if counts["delivered"] != last:
                        last, since = counts["delivered"], time.monotonic()
                    elif time.monotonic() - since > stall_s:
                        error = (f"stalled: {counts['delivered']} of {asked} cards asked for arrived, none for "
                                 f"{stall_s:g} s")
                        break
            if progress is not None:
                print(f"soak: {counts['delivered']}/{cards} cards, {time.monotonic() - t0:.1f} s", file=progress,
                      flush=True)
        if error is None:
            time.sleep(0.2)  # a double pull's second card, a late duplicate
    finally:
        link.close()
        done.set()
        consumer.join(10.0)
    seconds = time.monotonic() - t0
    stats = link.stats
    delivered = counts["delivered"]
    result: dict[str, Any] = {
        "shoe": url,
        "serial": serial,
        "cards": cards,
        "asked": asked,
        "delivered": delivered,
        "lost": max(asked - delivered, 0),
        "extra": max(delivered - asked, 0),
        "duplicated": counts["duplicated"],
        "out_of_order": counts["out_of_order"],
        "repeated_in_deck": counts["repeated_in_deck"],
        "unread": counts["unread"],
        "gap_reported": counts["gap_reported"],
        "bad_frames": stats.bad_frames,
        "reconnects": stats.reconnects,
        "resend_requests": stats.resends,
        "duplicates_dropped": stats.duplicates_dropped,
        "shoe_faults": counts["faults"],
        "shoe_buttons": counts["buttons"],
        "seconds": round(seconds, 3),
        "cards_per_s": round(delivered / seconds, 1) if seconds else None,
    }
    if error is not None:
        result["error"] = error
    return result


def passed_real(result: dict[str, Any]) -> bool:
    """True when every card asked for arrived once, in order, no identity twice in a deck."""
    return not (result.get("error") or result["lost"] or result["duplicated"] or result["out_of_order"]
                or result["repeated_in_deck"] or result["asked"] < result["cards"])


def _lost_to_gaps(record: _Record, gaps: list[tuple[int, int]], seen: bytearray) -> int:
    if not gaps:
        return 0
    n = 0
    with record.lock:
        for a, b in gaps:
            for s in range(a, b):
                if s <= len(record.code) and record.code[s - 1] != NO_CARD and (s > len(seen) or not seen[s - 1]):
                    n += 1
    return n


def _spec_text(faults: Faults) -> str:
    parts = []
    for name, value in vars(faults).items():
        if name == "schedule":
            continue
        default = Faults.__dataclass_fields__[name].default
        if value != default:
            parts.append(f"{name.replace('_', '-')}={value}")
    for at, actions in sorted(faults.schedule.items()):
        parts.extend(f"{a}-at={at}" for a in actions)
    return ",".join(parts)


def passed(result: dict[str, Any]) -> bool:
    """True when nothing was lost, duplicated, reordered or changed."""
    return not (result["lost"] or result["duplicated"] or result["out_of_order"] or result["mismatched"])


def main(args: argparse.Namespace) -> int:
    """The ``shoe-ctl hil soak`` command: exit 0 only when :func:`passed`; 2 for a bad argument
    (``--cards`` below 1, ``--stall-s`` not above 0, a fault spec that does not parse), named on
    stderr."""
    if args.cards < 1:
        print(f"shoe-ctl hil soak: --cards {args.cards}: need at least 1 card", file=sys.stderr)
        return 2
    stall_s = getattr(args, "stall_s", 60.0)
    if not stall_s > 0:  # 0 counted every card in flight as lost
        print(f"shoe-ctl hil soak: --stall-s {stall_s}: need more than 0 seconds", file=sys.stderr)
        return 2
    if getattr(args, "shoe", None):
        return _main_real(args, stall_s)
    try:
        faults = Faults.parse(args.faults)
    except ValueError as exc:
        print(f"shoe-ctl hil soak: --faults: {exc}", file=sys.stderr)
        return 2
    result = run_soak(args.cards, faults, args.seed, transport=args.transport,
                      stall_s=stall_s, progress=sys.stderr if args.progress or not args.json else None)
    return _report(result, passed(result), args.json)


def _report(result: dict[str, Any], ok: bool, as_json: bool) -> int:
    """Print a soak's ``result`` (one JSON line, or aligned ``key: value`` lines and PASS/FAIL);
    the exit status: 0 when ``ok``, else 1."""
    if as_json:
        print(json.dumps(result, separators=(",", ":")), flush=True)
    else:
        for key, value in result.items():
            print(f"{key:>20}: {value}")
        print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def _main_real(args: argparse.Namespace, stall_s: float) -> int:
    """``hil soak --shoe URL``: the operator hook pulls the cards (:func:`run_soak_real`)."""
    if args.faults:
        print("shoe-ctl hil soak: --faults: injected by the virtual shoe only, not with --shoe", file=sys.stderr)
        return 2
    if args.batch < 1:
        print(f"shoe-ctl hil soak: --batch {args.batch}: need at least 1 card", file=sys.stderr)
        return 2
    try:
        hook = hook_from_spec(args.operator)
    except ValueError as exc:
        print(f"shoe-ctl hil soak: {exc}", file=sys.stderr)
        return 2
    result = run_soak_real(args.shoe, args.cards, hook, batch=args.batch, baudrate=args.baudrate,
                           stall_s=stall_s, progress=sys.stderr if args.progress else None)
    return _report(result, passed_real(result), args.json)
