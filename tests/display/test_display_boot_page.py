"""The display while the service is down, in a real headless Chromium: the kiosk opens the
no-service page from the disk first (deploy/shoe-ctl-kiosk.sh's ``--app`` address), which says
NO SERVICE — DO NOT DEAL before the service ever answered and turns into the dealer display when
it does; a page load (a reload) while the service is down gets the same page from the display's
service worker, not the browser's error page (docs/display.md, *No service*)."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import chromium, expect  # skips the module without Playwright or Chromium
from paths import ROOT
from test_display_service_states import png_red_share

from shoe_ctl.display.server import start_display

NO_SERVICE = "NO SERVICE \u2014 DO NOT DEAL"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kiosk_address(tmp_path: Path, url: str) -> str:
    """The address deploy/shoe-ctl-kiosk.sh opens, with a stand-in browser that prints its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "chromium"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    fake.chmod(0o755)
    done = subprocess.run(["sh", str(ROOT / "deploy" / "shoe-ctl-kiosk.sh")], capture_output=True, text=True,
                          timeout=30, env={**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin",
                                           "SHOE_CTL_DISPLAY_URL": url})
    assert done.returncode == 0, done.stderr
    (app,) = [a for a in done.stdout.splitlines() if a.startswith("--app=")]
    return app[len("--app="):]


def test_the_kiosk_at_boot_says_no_service_until_the_service_answers(browser: Any, tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    address = kiosk_address(tmp_path, url)
    assert address.startswith("file://") and address.endswith(f"no-service.html#{url}")
    context = browser.new_context(viewport={"width": 1024, "height": 600})
    sink = None
    try:
        page = context.new_page()
        page.goto(address)  # at boot: nothing listens on the display's port yet
        expect(page.locator("#text")).to_have_text(NO_SERVICE)
        expect(page.locator("#why")).to_contain_text(f"the service at {url} does not answer")
        shot = page.screenshot()
        (tmp_path / "boot.png").write_bytes(shot)
        assert png_red_share(shot) > 0.8
        page.wait_for_timeout(1500)  # it keeps asking: still the same screen, no error page
        assert page.url == address
        sink = start_display("127.0.0.1", port, lambda _ev: None)  # the service comes up
        page.wait_for_url(url, timeout=10000)
        page.wait_for_selector("#conn:text('live')", timeout=10000)
        assert page.locator("#no-service").is_hidden()
    finally:
        context.close()
        if sink is not None:
            sink.close()


def test_a_reload_while_the_service_is_down_shows_no_service_then_the_display_again(browser: Any) -> None:
    port = free_port()
    sink = start_display("127.0.0.1", port, lambda _ev: None)
    context = browser.new_context(viewport={"width": 800, "height": 480})
    try:
        page = context.new_page()
        page.goto(sink.url)
        page.wait_for_selector("#conn:text('live')", timeout=10000)
        page.evaluate("navigator.serviceWorker.ready.then(() => true)")
        page.wait_for_function("navigator.serviceWorker.controller !== null", timeout=10000)
        sink.close()  # the service is gone
        sink = None
        page.reload()
        expect(page.locator("#text")).to_have_text(NO_SERVICE)
        assert page.url == f"http://127.0.0.1:{port}/"  # the display's own address, no browser error page
        assert png_red_share(page.screenshot()) > 0.8
        sink = start_display("127.0.0.1", port, lambda _ev: None)  # back
        page.wait_for_selector("#conn:text('live')", timeout=10000)
        assert page.locator("#no-service").is_hidden()
    finally:
        context.close()
        if sink is not None:
            sink.close()
