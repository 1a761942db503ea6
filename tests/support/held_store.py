"""A journal whose disk stalls on demand: :class:`HeldCommits` wraps a writable ``Journal``'s
store so that, once :meth:`HeldCommits.hold` is called, the next commit takes the store's lock and
stays inside it until :meth:`HeldCommits.let_go` (as a commit stuck in ``fsync`` on a frozen
filesystem or a stalled SD card does), then goes on as usual."""

from __future__ import annotations

import threading
from typing import Any

from shoe_ctl.service.journal import Journal


class HeldCommits:
    """Holds the commits of ``journal``'s store on demand (see the module).

    ``inside`` is set once a held commit is in, holding the store's lock; ``held`` counts the
    commits that were held."""

    def __init__(self, journal: Journal) -> None:
        self.store = journal.store
        self.inside = threading.Event()
        self._gate = threading.Event()
        self._gate.set()
        self.held = 0
        self._real = self.store.write_groups
        self.store.write_groups = self._write_groups  # type: ignore[method-assign]

    def hold(self) -> None:
        """From now on a commit stays in (with the store's lock) until :meth:`let_go`."""
        self.inside.clear()
        self._gate.clear()

    def let_go(self) -> None:
        """Let the held commit (and every later one) through."""
        self._gate.set()

    def _write_groups(self, *args: Any, **kw: Any) -> Any:
        with self.store.lock:
            if not self._gate.is_set():
                self.held += 1
                self.inside.set()
                self._gate.wait(60)
            return self._real(*args, **kw)
