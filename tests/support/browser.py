"""Headless Chromium for the page tests (Debian's ``chromium``, driven by Playwright):
``chromium()`` launches it, ``open_page``/``live_page`` open the dealer display at a viewport and
wait until its event stream is live, ``expect`` is Playwright's.

Importing this module skips the importing test module when Playwright is not installed or there
is no Chromium at ``$SHOE_CTL_CHROMIUM`` (default ``/usr/bin/chromium``; ``scripts/setup.sh test``
installs it)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = playwright_api.expect
CHROMIUM = os.environ.get("SHOE_CTL_CHROMIUM", "/usr/bin/chromium")
if not Path(CHROMIUM).exists() and not shutil.which(CHROMIUM):
    pytest.skip(f"no Chromium at {CHROMIUM} (scripts/setup.sh test installs Debian's chromium)",
                allow_module_level=True)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (a Playwright ``Browser``), closed on leaving."""
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def open_page(browser: Any, url: str, size: tuple[int, int] = (1024, 600), *,
              on_request: Callable[[Any], None] | None = None,
              on_console: Callable[[Any], None] | None = None) -> tuple[Any, Any]:
    """A new touch context of ``size`` (width, height in CSS pixels) and its page at ``url``, once
    the display shows ``live`` (within 5 s); the caller closes the context. ``on_request`` sees
    every request the page makes and ``on_console`` every console message, both from before the
    page is loaded. The context is closed when the page does not get live."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, has_touch=True)
    try:
        page = context.new_page()
        if on_request is not None:
            page.on("request", on_request)
        if on_console is not None:
            page.on("console", on_console)
        page.goto(url)
        page.wait_for_selector("#conn:text('live')", timeout=5000)
    except BaseException:
        context.close()
        raise
    return context, page


@contextmanager
def live_page(browser: Any, url: str, size: tuple[int, int] = (1024, 600)) -> Iterator[Any]:
    """``open_page``'s page, its context closed on leaving."""
    context, page = open_page(browser, url, size)
    try:
        yield page
    finally:
        context.close()
