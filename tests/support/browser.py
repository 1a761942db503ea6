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


# The boxes a reader needs: each element matched (and shown) must lie inside the viewport and
# inside every ancestor that clips (overflow other than visible), must not be painted over by
# another element (the topmost element at points across its box is itself or inside it), and no two
# of them overlap unless one holds the other.
_LAYOUT_FAULTS = """(selectors) => {
  const faults = [];
  const els = [];
  for (const sel of selectors) {
    for (const el of document.querySelectorAll(sel)) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden') els.push([sel, el, r]);
    }
  }
  const name = (sel, el) => sel + (el.id ? '#' + el.id : '') + ' "' + (el.innerText || '').trim().slice(0, 24) + '"';
  const vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
  for (const [sel, el, r] of els) {
    const n = name(sel, el);
    if (r.left < -0.5 || r.top < -0.5 || r.right > vw + 0.5 || r.bottom > vh + 0.5) faults.push(n + ' leaves the screen');
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      const c = a.getBoundingClientRect();
      const top = c.top + a.clientTop, left = c.left + a.clientLeft;
      if (r.top < top - 0.5 || r.left < left - 0.5 || r.bottom > top + a.clientHeight + 0.5
          || r.right > left + a.clientWidth + 0.5) {
        faults.push(n + ' is clipped by ' + a.tagName.toLowerCase() + (a.id ? '#' + a.id : '.' + a.className));
        break;
      }
    }
    for (const fx of [0.1, 0.5, 0.9]) {
      for (const fy of [0.1, 0.5, 0.9]) {
        const x = r.left + r.width * fx, y = r.top + r.height * fy;
        if (x < 0 || y < 0 || x >= vw || y >= vh) continue;
        const top = document.elementFromPoint(x, y);
        if (top && top !== el && !el.contains(top) && !top.contains(el)) {
          faults.push(n + ' is under ' + top.tagName.toLowerCase() + (top.id ? '#' + top.id : '.' + top.className)
                      + ' at ' + Math.round(x) + ',' + Math.round(y));
        }
      }
    }
    // text cut inside the element itself (a clamp that hides lines: its content is taller)
    if (el.scrollHeight > el.clientHeight + 1 && getComputedStyle(el).overflowY !== 'auto'
        && getComputedStyle(el).overflowY !== 'scroll' && el.clientHeight > 0) faults.push(n + ' cuts its own text');
  }
  for (let i = 0; i < els.length; i++) {
    for (let j = i + 1; j < els.length; j++) {
      const [si, a, p] = els[i], [sj, b, q] = els[j];
      if (a.contains(b) || b.contains(a)) continue;
      const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (w > 0.5 && h > 0.5) faults.push(name(si, a) + ' overlaps ' + name(sj, b));
    }
  }
  return [...new Set(faults)];
}"""


def layout_faults(page: Any, selectors: list[str]) -> list[str]:
    """What keeps a reader from the elements ``selectors`` match (CSS selectors; hidden and empty
    elements are skipped): each fault names the element and what leaves it off the screen, clips
    it, paints over it or overlaps it. Empty when every one can be read where it is."""
    return list(page.evaluate(_LAYOUT_FAULTS, selectors))
