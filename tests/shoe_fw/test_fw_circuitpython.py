"""The firmware package runs on CircuitPython: every module of drivers/shoe_fw/ is parsed and
refused if it uses what CircuitPython lacks, and the package is run under CPython as the board
runs it (copied alone as ``shoe_fw/``, CircuitPython's modules faked) through the same seams.
What CircuitPython provides: https://docs.circuitpython.org/en/latest/shared-bindings/ (hashlib,
binascii, json, struct, os, random, time, gc, microcontroller.nvm, usb_cdc on the RP2040 boards)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "drivers" / "shoe_fw"
BOARD_FILES = {"code.py", "boot.py"}
"""Files copied to the board's root beside ``shoe_fw/`` (they import ``shoe_fw`` by name)."""

CIRCUITPYTHON = {
    "board", "busio", "digitalio", "microcontroller", "usb_cdc", "supervisor", "time", "struct", "hashlib",
    "binascii", "json", "os", "random", "gc", "math", "sys", "errno", "collections", "io", "re",
    "adafruit_pn532", "adafruit_bus_device",
}
"""Modules a module of the package may import at run time: CircuitPython's own, and the Adafruit
libraries the build guide has a maker copy to ``CIRCUITPY/lib``."""
PI_ONLY = {"pepper_c1", "serial"}
"""Modules a Pi-only reader module may import inside a function (never at module level)."""
TYPE_ONLY = {"typing", "collections.abc", "__future__"}
"""Modules allowed only where CircuitPython never runs them: under ``if TYPE_CHECKING`` or in a
``try`` whose ``except ImportError`` covers their absence."""
MISSING_METHODS = {"removeprefix", "removesuffix", "casefold", "format_map", "expandtabs", "isascii",
                   "isidentifier", "zfill", "partition", "rpartition", "swapcase", "splitlines", "hex"}
"""str/bytes methods CircuitPython's builds leave out (or only some ports have)."""


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _guarded(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """True when ``node`` is under ``if TYPE_CHECKING:`` or in a ``try`` body that catches
    ImportError."""
    cur = node
    while cur in parents:
        up = parents[cur]
        if isinstance(up, ast.If) and "TYPE_CHECKING" in ast.unparse(up.test) and cur in up.body:
            return True
        if isinstance(up, ast.Try) and cur in up.body:
            names = {ast.unparse(h.type) for h in up.handlers if h.type is not None}
            if any("ImportError" in n for n in names):
                return True
        cur = up
    return False


def _in_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    cur = node
    while cur in parents:
        cur = parents[cur]
        if isinstance(cur, ast.FunctionDef | ast.AsyncFunctionDef):
            return True
    return False


def problems(path: Path) -> list[str]:
    """What in ``path`` CircuitPython lacks, one line each (``file:line: what``)."""
    tree = ast.parse(path.read_text(), str(path))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    out: list[str] = []

    def bad(node: ast.AST, what: str) -> None:
        out.append(f"{rel}:{getattr(node, 'lineno', 0)}: {what}")

    appended: dict[str, ast.AST] = {}
    bounded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.ImportFrom) and node.level:
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                top = name.split(".")[0]
                if path.name in BOARD_FILES and path.parent == PACKAGE and top == "shoe_fw":
                    continue
                if name in TYPE_ONLY or top in TYPE_ONLY:
                    if not _guarded(node, parents):
                        bad(node, f"import {name} at run time (CircuitPython has none): guard it")
                elif top in PI_ONLY:
                    if not _in_function(node, parents):
                        bad(node, f"import {name} at module level: a Pi-only module, import it where it is used")
                elif top not in CIRCUITPYTHON:
                    bad(node, f"import {name}: not a CircuitPython module (an absolute import of the package? "
                              "use a relative one)")
        elif isinstance(node, ast.Match):
            bad(node, "match statement (CircuitPython has none)")
        elif isinstance(node, ast.NamedExpr):
            bad(node, "assignment expression := (not on every CircuitPython port)")
        elif isinstance(node, ast.AsyncFunctionDef | ast.Await | ast.AsyncFor | ast.AsyncWith):
            bad(node, "async code (the firmware's loop is one plain loop)")
        elif isinstance(node, ast.FormattedValue):
            if node.conversion == ord("a"):
                bad(node, "f-string !a conversion")
            if node.format_spec is not None and any(isinstance(v, ast.FormattedValue)
                                                    for v in ast.walk(node.format_spec)):
                bad(node, "f-string with a nested replacement field in its format spec")
            if any(isinstance(v, ast.JoinedStr) for v in ast.walk(node.value)):
                bad(node, "nested f-string")
        elif isinstance(node, ast.JoinedStr):
            texts = [v for v in node.values if isinstance(v, ast.Constant)]
            if any(isinstance(t.value, str) and t.value.endswith("=") for t in texts):
                bad(node, "f-string ending a text in '=' before a field (the {x=} form?)")
        elif isinstance(node, ast.ClassDef):
            for deco in node.decorator_list:
                if "dataclass" in ast.unparse(deco):
                    bad(node, "dataclass (CircuitPython has no dataclasses)")
        elif isinstance(node, ast.Call):
            fn = node.func
            if isinstance(fn, ast.Name) and fn.id == "zip" and node.keywords:
                bad(node, "zip() with keywords")
            if isinstance(fn, ast.Attribute):
                if fn.attr in MISSING_METHODS:
                    bad(node, f".{fn.attr}() (missing in CircuitPython)")
                if fn.attr in ("to_bytes", "from_bytes") and node.keywords:
                    bad(node, f".{fn.attr}() with keywords (CircuitPython takes them positional only)")
                owner = fn.value
                if isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) and owner.value.id == "self":
                    if fn.attr in ("append", "extend", "insert"):
                        appended.setdefault(owner.attr, node)
                    if fn.attr in ("pop", "clear", "popleft"):
                        bounded.add(owner.attr)
            if isinstance(fn, ast.Name) and fn.id == "len" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "self":
                    if isinstance(parents.get(node), ast.Compare):
                        bounded.add(arg.attr)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        func = parents.get(node)
                        while func is not None and not isinstance(func, ast.FunctionDef):
                            func = parents.get(func)
                        if func is not None and func.name != "__init__":
                            bounded.add(t.attr)  # emptied again elsewhere
        elif isinstance(node, ast.Name) and node.id in ("threading", "dataclasses", "asyncio", "typing"):
            if isinstance(node.ctx, ast.Load) and not _guarded(node, parents):
                bad(node, f"{node.id} used at run time")
    for attr, node in appended.items():
        if attr not in bounded:
            bad(node, f"self.{attr} grows (append/extend) and is never emptied nor its length checked: "
                      "memory is bounded on a board")
    return out


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_module_uses_only_what_circuitpython_has(path: Path) -> None:
    assert problems(path) == []


@pytest.mark.parametrize(("source", "finding"), [
    ("import threading\n", "import threading: not a CircuitPython module"),
    ("from dataclasses import dataclass\n", "import dataclasses"),
    ("from typing import Any\n", "import typing at run time"),
    ("from drivers.shoe_fw import codec\n", "an absolute import of the package"),
    ("import serial\n", "a Pi-only module"),
    ("x = 1\nif (y := x):\n    pass\n", "assignment expression"),
    ("match 1:\n    case 1:\n        pass\n", "match statement"),
    ("class A:\n    def __init__(self):\n        self.log = []\n    def f(self, x):\n        self.log.append(x)\n",
     "self.log grows"),
    ("x = 1\ns = f'{x!a}'\n", "!a conversion"),
    ("x = 1\ns = f'{x=}'\n", "the {x=} form"),
    ("b = b''\nb.hex()\n", ".hex()"),
    ("n = (1).to_bytes(2, byteorder='big')\n", "with keywords"),
])
def test_the_check_finds_what_circuitpython_lacks(tmp_path: Path, source: str, finding: str) -> None:
    path = tmp_path / "_probe_check.py"  # not in the package: nothing else reading it sees the probe
    path.write_text(source)
    found = problems(path)
    assert any(finding in f for f in found), found


def test_a_list_emptied_again_or_length_checked_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "_probe_ok.py"
    path.write_text(textwrap.dedent("""
            try:
                from typing import Any
            except ImportError:
                pass
            class A:
                def __init__(self):
                    self.out = []
                    self.tags = []
                def add(self, x):
                    self.out.append(x)
                    if len(self.tags) < 4:
                        self.tags.append(x)
                def take(self):
                    out, self.out = self.out, []
                    return out
        """))
    assert problems(path) == []


FAKES = '''
import sys, types
cpu = types.SimpleNamespace(uid=bytes(range(8)))
sys.modules["microcontroller"] = types.SimpleNamespace(nvm=bytearray(256), cpu=cpu)
ticks = [0]
def ticks_ms():
    ticks[0] += 10
    return ticks[0] % (1 << 29)
sys.modules["supervisor"] = types.SimpleNamespace(ticks_ms=ticks_ms)
class Pin:  # digitalio.DigitalInOut: the pairing button, not held (pulled up)
    def __init__(self, name):
        self.value = True
    def switch_to_input(self, pull=None):
        pass
    def deinit(self):
        pass
sys.modules["board"] = types.SimpleNamespace(GP4="GP4")
sys.modules["digitalio"] = types.SimpleNamespace(DigitalInOut=Pin, Pull=types.SimpleNamespace(UP=1))
'''


def test_the_package_runs_alone_as_the_board_runs_it(tmp_path: Path) -> None:
    """Copied alone as ``shoe_fw/`` (no ``drivers``, no ``shoe_ctl`` on the path), with fakes of
    the board's modules: the RP2040 entry starts, says HELLO on the port, answers a HOST_HELLO,
    deals a pass of the beam as a CARD, and keeps its state in the NVM across a restart."""
    board = tmp_path / "CIRCUITPY"
    shutil.copytree(PACKAGE, board / "shoe_fw", ignore=shutil.ignore_patterns("__pycache__", "code.py", "boot.py"))
    script = FAKES + textwrap.dedent('''
        import shoe_fw.rp2040 as rp
        from shoe_fw import codec as c
        from shoe_fw.reader import ScriptedReader

        class Port:
            def __init__(self):
                self.rx = bytearray()
                self.tx = bytearray()
            @property
            def in_waiting(self):
                return len(self.rx)
            def read(self, n):
                out = bytes(self.rx[:n])
                del self.rx[:n]
                return out
            def write(self, data):
                self.tx += data

        class Beam:
            state = False
            def broken(self):
                return self.state

        port, beam, reader = Port(), Beam(), ScriptedReader()
        nvm = sys.modules["microcontroller"].nvm
        uid = bytes.fromhex("04a10033")
        lookup = {uid: ("D12", 51)}.get
        fw = rp.main(port=port, nvm=nvm, reader=reader, beam=beam, lookup=lookup, turns=3)
        port.rx += c.frame_of(c.body_v1(c.T_HOST_HELLO, 1, bytes([1, 1])))
        store = rp.NvmStore(nvm)
        rp.turn(fw, port, store, 1000)  # the board's clock: an int of milliseconds
        reader.present = [uid]
        beam.state = True
        rp.turn(fw, port, store, 1050)
        beam.state = False
        rp.turn(fw, port, store, 1100)
        frames = c.FrameSplitter().feed(bytes(port.tx))
        types_ = [c.checked_body(f)[0] for f in frames]
        print("types", sorted(set(types_)))
        print("kept", rp.NvmStore(nvm).load())
        print("modules", sorted(m for m in sys.modules if m.startswith(("drivers", "shoe_ctl", "hil"))))
        again = rp.main(port=Port(), nvm=nvm, reader=ScriptedReader(), beam=Beam(), lookup=lookup, turns=1)
        print("again", again.core.next_seq, again.core.boot_count, again.core.card_total)
    ''')
    script = f"import sys\nsys.path.insert(0, {str(board)!r})\n" + script
    done = subprocess.run([sys.executable, "-S", "-E", "-c", script], cwd=board, capture_output=True, text=True,
                          timeout=60)  # -S -E: no site-packages (no drivers, no cobs), only the copy
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["types"] == "[1, 2, 16]"  # HELLO, HEARTBEAT, CARD
    assert lines["kept"] == "(2, 1, 1, 0, 1)"  # next_seq 2 after one card, boot 1, 1 card
    assert lines["modules"] == "[]"
    assert lines["again"] == "2 2 1"  # a restart: numbering and counts go on, boot count + 1


def test_a_circuitpython_without_sha256_is_named_at_start(tmp_path: Path) -> None:
    """CircuitPython 9.x and 10.0 build ``hashlib`` with SHA-1 only (``hashlib.new("sha256")``
    raises ValueError; SHA-256 came with 10.1): the RP2040 entry stops before it touches the
    port, naming the CircuitPython it needs, instead of failing at the first MAC (a pairing) or
    deck seal."""
    board = tmp_path / "CIRCUITPY"
    shutil.copytree(PACKAGE, board / "shoe_fw", ignore=shutil.ignore_patterns("__pycache__", "code.py", "boot.py"))
    script = FAKES + textwrap.dedent('''
        import hashlib as real
        def new(name, data=b""):
            if name != "sha1":
                raise ValueError("Unsupported hash algorithm")
            return real.new(name, data)
        sys.modules["hashlib"] = types.SimpleNamespace(new=new)
        import shoe_fw.rp2040 as rp

        class Port:
            in_waiting = 0
            written = 0
            def read(self, n):
                return b""
            def write(self, data):
                self.written += len(data)

        port = Port()
        try:
            rp.main(port=port, nvm=bytearray(256), reader=object(), beam=object(), lookup={}.get, turns=1)
        except RuntimeError as exc:
            print("stopped", exc)
        print("written", port.written)
    ''')
    script = f"import sys\nsys.path.insert(0, {str(board)!r})\n" + script
    done = subprocess.run([sys.executable, "-S", "-E", "-c", script], cwd=board, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert "no SHA-256" in lines["stopped"] and "CircuitPython 10.1 or later" in lines["stopped"]
    assert lines["written"] == "0"


def test_the_board_never_waits_on_its_usb_port(tmp_path: Path) -> None:
    """The shoe's USB CDC data port is set never to wait, to read (``timeout``) or to write
    (``write_timeout``: CircuitPython's None waits until the host reads, which stalls the loop,
    the beam and the reader with it, while a host holds the port open without reading)."""
    board = tmp_path / "CIRCUITPY"
    shutil.copytree(PACKAGE, board / "shoe_fw", ignore=shutil.ignore_patterns("__pycache__", "code.py", "boot.py"))
    script = FAKES + textwrap.dedent('''
        import shoe_fw.rp2040 as rp
        from shoe_fw.reader import ScriptedReader

        class Data:  # usb_cdc.Serial as CircuitPython makes it: waits for ever until told otherwise
            timeout = None
            write_timeout = None
            in_waiting = 0
            def read(self, n):
                return b""
            def write(self, data):
                if self.write_timeout is None:
                    raise RuntimeError("a write that waits for the host")
                return len(data)

        class Beam:
            def broken(self):
                return False

        data = Data()
        sys.modules["usb_cdc"] = types.SimpleNamespace(data=data)
        rp.main(nvm=bytearray(256), reader=ScriptedReader(), beam=Beam(), lookup={}.get, turns=3)
        print("timeouts", data.timeout, data.write_timeout)
    ''')
    script = f"import sys\nsys.path.insert(0, {str(board)!r})\n" + script
    done = subprocess.run([sys.executable, "-S", "-E", "-c", script], cwd=board, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "timeouts 0 0" in done.stdout
