"""``freeze_startup_heap`` (called by ``shoe-ctl run`` once its table has started): the objects
alive then are frozen, and a cycle made afterwards is still collected."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
import gc, weakref
from shoe_ctl.table import freeze_startup_heap
before = gc.get_freeze_count()
freeze_startup_heap()
frozen = gc.get_freeze_count()
class Node: pass
a, b = Node(), Node()
a.other, b.other = b, a  # a cycle made after the start
gone = weakref.ref(a)
del a, b
gc.collect()
print(before, frozen, gone() is None)
"""


def test_startup_objects_are_frozen_and_later_cycles_still_collected() -> None:
    # its own process: freezing the test runner's heap would keep every later test's cycles
    out = subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         check=True).stdout.split()
    before, frozen, collected = int(out[0]), int(out[1]), out[2]
    assert before == 0 and frozen > 1000  # the modules and everything imported
    assert collected == "True"
