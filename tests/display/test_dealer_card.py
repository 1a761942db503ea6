"""docs/dealer-card.md: every LED signal with its colours and headline, every input of the page
and of the table buttons, the STOP procedure; printed (Chromium's PDF, A4) it is one page."""

from __future__ import annotations

import html
import os
import re
import shutil
from pathlib import Path

import pytest
from paths import ROOT

from drivers.buttons import BUTTON_ACTIONS
from drivers.leds import LED_NAMES, PATTERNS

CARD = (ROOT / "docs" / "dealer-card.md").read_text()
STATIC = ROOT / "shoe_ctl" / "display" / "static"


def rows() -> dict[str, str]:
    """Headline column -> LED column of the signal table."""
    out = {}
    for line in CARD.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("|") and len(cells) == 3 and not set(cells[0]) <= {"-"}:
            out[cells[1]] = cells[0]
    return out


HEADLINES = {"idle": "NO HAND", "deal": "DEAL", "burn": "BURN", "community": "COMMUNITY", "betting": "BETTING",
             "scramble": "SCRAMBLE", "cut": "CUT", "showdown": "SHOWDOWN", "stop": "STOP",
             "shoe-fault": "SHOE FAULT", "degraded": "SHOE NOT HEARD"}
"""Signal -> how its headline starts on the page (app.js, headline())."""


def test_every_signal_with_its_colours_and_mode() -> None:
    table = rows()
    js = (STATIC / "app.js").read_text()
    assert set(HEADLINES) == {str(s) for s in PATTERNS}
    for signal, pattern in PATTERNS.items():
        word = HEADLINES[str(signal)]
        assert f'"{word}' in js, f"the page's headline for {signal} does not start {word!r}"
        hits = [leds for head, leds in table.items() if head.startswith(word)]
        assert len(hits) == 1, f"{signal}: {len(hits)} rows whose headline starts {word!r}"
        leds = hits[0]
        if not pattern.leds:
            assert "off" in leds
        for name in pattern.leds:
            assert name in leds, (signal, leds)
        assert set(LED_NAMES) - set(pattern.leds) - {n for n in LED_NAMES if n in leds} == \
            set(LED_NAMES) - set(pattern.leds), (signal, leds)  # no other colour named
        mode = {"steady": "steady", "blink": "blinking", "pulse": "pulsing"}[pattern.mode]
        assert not pattern.leds or mode in leds, (signal, leds)


def test_every_input_is_on_the_card() -> None:
    page = (STATIC / "index.html").read_text()
    labels = {html.unescape(re.sub(r"<[^>]+>", "", m)).strip()
              for m in re.findall(r"<button[^>]*data-action[^>]*>(.*?)</button>", page)}
    assert len(labels) >= 15
    for label in labels:
        assert f"**{label}**" in CARD, label
    for button in BUTTON_ACTIONS:
        assert f"*{button}*" in CARD, button
    for word in ("REFUSED", "NOT SENT", "Acknowledge", "call the floor", "Muck"):
        assert word in CARD


def test_stop_procedure_is_in_order() -> None:
    part = CARD.split("## When the screen says STOP", 1)[1]
    steps = re.findall(r"^(\d)\. ", part, re.M)
    assert steps == ["1", "2", "3", "4"]
    assert part.index("Stop dealing") < part.index("Read") < part.index("Acknowledge")


def _html(md: str) -> str:
    def inline(t: str) -> str:
        t = html.escape(t)
        return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", re.sub(r"(?<!\*)\*([^*]+)\*(?!\*)", r"<i>\1</i>", t))
    out, table, para = [], False, []
    for line in md.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if set("".join(cells)) <= {"-"}:
                continue
            out.append(("<table>" if not table else "") + "<tr>" + "".join(f"<td>{inline(c)}</td>" for c in cells)
                       + "</tr>")
            table = True
            continue
        if table:
            out.append("</table>")
            table = False
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{inline(line.lstrip('# '))}</h{level}>")
        elif re.match(r"^(- |\d\. )", line):
            out.append(f"<p class=li>{inline(line)}</p>")
        elif line.strip():
            para.append(line.strip())
            continue
        if para:
            out.append(f"<p>{inline(' '.join(para))}</p>")
            para = []
    style = ("body{font:9.5pt 'DejaVu Sans',sans-serif;margin:0} table{border-collapse:collapse} "
             "td{border:1px solid #888;padding:1pt 3pt;vertical-align:top} h1{font-size:13pt} "
             "h2{font-size:11pt;margin:6pt 0 2pt} p{margin:2pt 0} p.li{margin-left:1em}")
    return f"<html><head><style>{style}</style></head><body>{''.join(out)}</body></html>"


def test_prints_on_one_page(tmp_path: Path) -> None:
    api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    chromium = os.environ.get("SHOE_CTL_CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).exists() and not shutil.which(chromium):
        pytest.skip(f"no Chromium at {chromium}")
    with api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox"])
        try:
            page = browser.new_page()
            page.set_content(_html(CARD))
            assert "STOP" in page.inner_text("body")
            pdf = page.pdf(format="A4", margin={"top": "12mm", "bottom": "12mm", "left": "12mm", "right": "12mm"})
        finally:
            browser.close()
    (tmp_path / "dealer-card.pdf").write_bytes(pdf)
    pages = len(re.findall(rb"/Type\s*/Page(?!s)", pdf))
    assert pages == 1, f"the card prints on {pages} pages"


def test_every_screen_the_page_can_show_without_an_instruction_is_on_the_card() -> None:
    """The no-service screens (app.js ``setLost``), the connecting headline and the bench-mode
    label: a dealer meets each of them at some table."""
    js = (ROOT / "shoe_ctl" / "display" / "static" / "app.js").read_text()
    html = (ROOT / "shoe_ctl" / "display" / "static" / "index.html").read_text()
    said = {t.replace("\\u2014", "\u2014") for t in re.findall(r'setLost\("([A-Z][^"]*)"', js)}
    said.add(re.search(r'let lost = "([^"]*)"', js).group(1).replace("\\u2014", "\u2014"))
    said.add(re.search(r'return "(CONNECTING[^"]*)"', js).group(1).replace("\\u2026", "\u2026"))
    said.add(re.search(r'id="shoe-auth"[^>]*>([^<]*)<', html).group(1))
    assert len(said) >= 5, said
    # one row holds the three "... — DO NOT DEAL" screens: NO SERVICE (STOPPED, STUCK)
    words = {t: t.split(" \u2014")[0].replace("SERVICE ", "") if "DO NOT DEAL" in t else t for t in said}
    missing = sorted(t for t, w in words.items() if w not in CARD and t not in CARD)
    assert missing == []
