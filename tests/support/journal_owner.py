"""A journal's writer in a process of its own, for the tests of one writing process
(docs/journal.md, "One writing process")."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

TABLE, PROFILE = "T1", "house"

# A writer in a process of its own: opens the journal, answers "ready", then appends one record
# per line read and prints its sequence; closes at the end of its input.
OWNER = textwrap.dedent("""
    import sys
    from shoe_ctl.service.journal import Journal
    path, table, profile = sys.argv[1:4]
    with Journal(path, table=table, profile=profile) as j:
        print("ready", flush=True)
        for line in sys.stdin:
            try:
                print(j.append_record("note", {"n": line.strip()}), flush=True)
            except Exception as exc:
                print(f"failed: {type(exc).__name__}: {exc}", flush=True)
""")


class Owner:
    """A child process holding the journal ``path`` open for writing."""

    def __init__(self, path: Path, table: str = TABLE, profile: str = PROFILE) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", OWNER, str(path), table, profile],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     cwd=Path(__file__).resolve().parents[2])
        assert self._line() == "ready"

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the owner process ended (status {self.proc.wait(30)})"
        return line.strip()

    def append(self, text: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()
        return self._line()

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
