"""The conformance kit (hil/conform.py, docs/conformance.md) proven in CI: it passes the virtual
shoe and a second shoe written from docs/protocol.md alone (tests/support/doc_shoe.py, no code
shared with hil/shoe_device.py), and it fails shoes that break a rule. A shoe expected to pass
is tested untimed (``timed=False``: its timings measured, no test failed for one): the simulated
shoes share a loaded 2-core machine with the kit, whose own reads can stall past any limit; a
shoe that breaks a timing limit by far is still failed, timed (a real shoe is tested timed, at 1)."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from doc_shoe import DocShoe
from socket_burst import BROKEN_BURST, BROKEN_FRAMES, count_socket_reads

from hil.conform import CallableOperator, Kit, junit_xml, run_kit, virtual_bench
from hil.deck import Deck
from hil.virtual_shoe import VirtualShoe

SCALE = 3.0
ALL = 15
SKIPPED = 1  # foreign-card: neither shoe offers names-foreign (a shoe that reads no deck maps)


def doc_bench(shoe: DocShoe) -> CallableOperator:
    def pull() -> float:
        at = time.time()
        shoe.pull()
        return at

    return CallableOperator({"pull-card": pull, "power-cycle": lambda: shoe.power_cycle(),  # type: ignore[dict-item]
                             "unplug": lambda: shoe.unplug(), "replug": lambda: shoe.replug()})


def _check_report(report: dict[str, Any], serial: str) -> None:
    failed = [(r["name"], r["message"]) for r in report["results"] if r["status"] != "passed"]
    assert failed == [("foreign-card", "the shoe does not offer names-foreign (section 16)")]
    assert report["summary"] == {"passed": ALL, "failed": 0, "skipped": SKIPPED}
    assert report["protocol"] == 1 and report["shoe"]["serial"] == serial and report["shoe"]["firmware"]
    suite = ET.fromstring(junit_xml(report))
    assert suite.get("tests") == str(ALL + SKIPPED) and suite.get("failures") == "0"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["protocol"] == "1" and props["shoe.serial"] == serial


def test_the_kit_passes_the_virtual_shoe() -> None:
    report = run_kit("virtual", time_scale=SCALE, timed=False)
    _check_report(report, "VS-0001")
    assert report["shoe"]["caps"] == ["persistent-counters"] and report["timed"] is False
    measured = {r["name"]: r["measured"] for r in report["results"]}
    assert measured["heartbeat"]["heartbeat_max_gap_s"] > 0 and measured["handshake"]["hello_answer_s"] >= 0
    assert measured["dropped-ack"]["resend_on_timeout_s"] >= 0.25


def test_the_kit_passes_a_shoe_written_from_the_document_alone() -> None:
    shoe = DocShoe()
    try:
        report = Kit(shoe.url, doc_bench(shoe), time_scale=SCALE, timed=False).run()
    finally:
        shoe.close()
    _check_report(report, "DOC-7")
    assert report["shoe"]["caps"] == ["keeps-buffer"] and report["shoe"]["boot_count"] is None


def test_the_kit_passes_a_shoe_written_from_the_document_alone_on_version_2() -> None:
    """The document's shoe, paired: every test of the kit passes in authenticated frames (its
    HMAC, keys and sessions written from docs/protocol.md section 14 alone)."""
    secret = bytes(range(100, 132))
    shoe = DocShoe(secret=secret)
    try:
        report = Kit(shoe.url, doc_bench(shoe), time_scale=SCALE, secret=secret, timed=False).run()
    finally:
        shoe.close()
    failed = [(r["name"], r["message"]) for r in report["results"] if r["status"] != "passed"]
    assert failed == [("foreign-card", "the shoe does not offer names-foreign (section 16)")]
    assert report["summary"] == {"passed": ALL, "failed": 0, "skipped": SKIPPED}
    assert report["protocol"] == 2 and report["shoe"]["version_range"] == [2, 2]
    assert report["shoe"]["serial"] == "DOC-7" and report["shoe"]["caps"] == ["keeps-buffer"]


def test_without_an_operator_the_tests_that_need_one_are_skipped_and_said() -> None:
    shoe = DocShoe()
    try:
        report = Kit(shoe.url, None, time_scale=SCALE, timed=False).run(only={"handshake", "card_delivery",
                                                                             "power_cycle"})
    finally:
        shoe.close()
    status = {r["name"]: (r["status"], r["message"]) for r in report["results"]}
    assert status["handshake"][0] == "passed"
    assert status["card"] == ("skipped", "needs an operator who pulls a card (--operator)")
    assert status["power-cycle"][0] == "skipped"


@pytest.mark.parametrize(("make", "test", "name"), [
    (lambda: VirtualShoe(Deck.seeded(0), resend_s=1.0), "dropped_ack_resent_on_timeout", "dropped-ack"),
    (lambda: VirtualShoe(Deck.seeded(0), heartbeat_s=1.6), "heartbeat_bounds", "heartbeat"),
], ids=["slow-resend", "slow-heartbeat"])
def test_the_kit_fails_a_virtual_shoe_that_breaks_a_timing_limit(make: Any, test: str, name: str) -> None:
    from hil.conform import virtual_bench

    shoe = make().start()
    try:
        report = Kit(shoe.url, virtual_bench(shoe), time_scale=1.5).run(only={test})
    finally:
        shoe.close()
    (result,) = report["results"]
    assert result["name"] == name and result["status"] == "failed", result


def test_untimed_the_kit_lists_a_missed_timing_limit_and_fails_no_test_for_it() -> None:
    """Untimed (a simulated shoe on a loaded machine) the shoe that resends too slowly passes the
    test, its resend time measured and the limit it missed listed; the report says untimed."""
    shoe = VirtualShoe(Deck.seeded(0), resend_s=1.0).start()
    try:
        report = Kit(shoe.url, virtual_bench(shoe), time_scale=1.5, timed=False).run(
            only={"dropped_ack_resent_on_timeout"})
    finally:
        shoe.close()
    (result,) = report["results"]
    assert result["status"] == "passed" and result["measured"]["resend_on_timeout_s"] >= 1.0
    assert [m.split(" after ")[0] for m in result["measured"]["over_limit"]] == ["resent"]
    assert report["timed"] is False and '<property name="timed" value="false"' in junit_xml(report)


class LaxShoe(DocShoe):
    """Takes an LED frame without its range checks (rows L-SIGNAL, L-LEDS)."""

    def _on_frame(self, mtype: int, payload: bytes, now: float) -> None:
        if mtype == 0x83 and len(payload) == 8 and payload[0]:
            self.token = payload[0]
            self.host_at = now
            self._beat()
            return
        super()._on_frame(mtype, payload, now)


def test_the_kit_fails_a_shoe_that_takes_a_malformed_host_frame() -> None:
    shoe = LaxShoe()
    try:
        report = Kit(shoe.url, doc_bench(shoe), time_scale=SCALE).run(only={"malformed_host_frames"})
    finally:
        shoe.close()
    (result,) = report["results"]
    assert result["status"] == "failed" and "LED frame was shown" in result["message"]


def test_the_kits_host_reads_a_burst_on_a_socket_port_in_a_few_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kit's side of a socket:// line (``RawHost.poll``) drains what waits after the first
    byte, as the product's link does: 1,000 broken frames sent at once are all seen, in a few
    dozen reads at most (pyserial's socket in_waiting says only whether a byte waits)."""
    import socket
    import threading

    from hil.conform import RawHost

    reads = count_socket_reads(monkeypatch)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    done, opened = threading.Event(), threading.Event()

    def device() -> None:
        conn, _ = srv.accept()
        opened.wait(10)  # pyserial's socket open discards what came before it returned
        conn.sendall(BROKEN_BURST)
        done.wait(10)
        conn.close()

    t = threading.Thread(target=device, daemon=True)
    t.start()
    host = RawHost(f"socket://127.0.0.1:{srv.getsockname()[1]}")
    host.open()
    opened.set()
    try:
        deadline = time.monotonic() + 10
        while host.decoder.stats.bad_frames < BROKEN_FRAMES and time.monotonic() < deadline:
            host.poll(0.05)
        assert host.decoder.stats.bad_frames == BROKEN_FRAMES
        assert reads[0] < 400, reads[0]
    finally:
        done.set()
        host.close()
        srv.close()
        t.join(5)


@pytest.mark.parametrize("off_s, budget_ms, passed", [(0.5, 0, False), (0.5, 1000, True), (-0.5, 0, False),
                                                       (-0.5, 1000, True)])
def test_the_card_limit_is_the_shoes_plus_the_operators_stated_budget(off_s: float, budget_ms: int,
                                                                       passed: bool) -> None:
    """An operator whose sensor time is half a second late (or early) fails the card test with no
    budget and passes with one that covers it: the kit times the shoe, and the report says how
    much of the limit was the operator's; the time from the request is reported, never checked."""
    with VirtualShoe(Deck.seeded(5)) as shoe:
        bench = virtual_bench(shoe)
        pull = bench.actions["pull-card"]
        late = CallableOperator({**bench.actions, "pull-card": lambda: (pull() or 0.0) + off_s})
        report = Kit(shoe.url, late, time_scale=SCALE, operator_budget=budget_ms / 1000).run(only={"card_delivery"})
    (result,) = report["results"]
    assert result["status"] == ("passed" if passed else "failed"), result
    assert report["operator_budget_s"] == budget_ms / 1000
    assert "card_after_request_s" in result["measured"]
    if not passed:
        assert ("after the CARD arrived" in result["message"]) == (off_s > 0)


def test_the_kit_says_it_met_a_paired_shoe() -> None:
    """A paired shoe speaks version 2 only and drops the kit's version-1 frames: the handshake
    fails saying so (its heartbeats come sealed under the hello key), not only that no HELLO came."""
    with VirtualShoe(Deck.seeded(6), serial="SH-PAIRED", secret=bytes(range(32))) as shoe:
        report = Kit(shoe.url, None, time_scale=SCALE).run(only={"handshake"})
    (result,) = report["results"]
    assert result["status"] == "failed"
    assert "sends version-2 (authenticated) frames: it is paired" in result["message"]
    assert "test the shoe before its first pairing" in result["message"]


def test_the_kit_passes_the_virtual_shoe_on_version_2() -> None:
    """The kit speaks version 2 to a paired shoe: every test passes in authenticated frames, the
    HELLO is version 2 and the shoe's range 2..2."""
    report = run_kit("virtual", time_scale=SCALE, protocol=2, timed=False)
    failed = [(r["name"], r["message"]) for r in report["results"] if r["status"] != "passed"]
    assert failed == [("foreign-card", "the shoe does not offer names-foreign (section 16)")]
    assert report["summary"] == {"passed": ALL, "failed": 0, "skipped": SKIPPED}
    assert report["protocol"] == 2 and report["shoe"]["protocol"] == 2 and report["shoe"]["version_range"] == [2, 2]


def test_version_2_with_the_wrong_secret_takes_nothing_from_the_shoe() -> None:
    with VirtualShoe(Deck.seeded(7), secret=bytes(range(32))) as shoe:
        report = Kit(shoe.url, None, time_scale=SCALE, secret=bytes(range(1, 33))).run(only={"handshake"})
    (result,) = report["results"]
    assert result["status"] == "failed" and "no HELLO" in result["message"]
