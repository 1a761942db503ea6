"""Where the dealer port binds (``--dealer-socket PATH``): only a socket nobody listens on is
replaced. Before, whatever was at PATH was unlinked -- ``--dealer-socket`` naming the journal or
``config/table.toml`` by a slip deleted it, and a second service took over a running one's socket
path (docs/recovery.md, the dealer port)."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from shoe_ctl.service.dealer_port import DealerPort, DealerPortError


def _none(_ev: object) -> None:
    return None


def test_a_regular_file_or_folder_at_the_path_is_kept_and_named(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    journal.write_bytes(b"SQLite format 3\x00 precious")
    for path in (journal, tmp_path):
        with pytest.raises(DealerPortError, match=f"dealer socket {path}: exists and is not a socket"):
            DealerPort(path, _none)
    assert journal.read_bytes() == b"SQLite format 3\x00 precious"


def test_a_live_socket_of_another_program_is_not_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "d.sock"
    first = DealerPort(path, _none).start()
    try:
        with pytest.raises(DealerPortError, match="in use by another program"):
            DealerPort(path, _none)
        c = socket.socket(socket.AF_UNIX)
        c.connect(str(path))  # the first service still has its path
        c.close()
    finally:
        first.close()
    assert not path.exists()


def test_a_socket_left_by_a_killed_service_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "d.sock"
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))
    stale.close()  # the file stays, nobody listens: as after a SIGKILL
    port = DealerPort(path, _none).start()
    try:
        c = socket.socket(socket.AF_UNIX)
        c.connect(str(path))
        c.close()
        assert oct(os.stat(path).st_mode & 0o777) == oct(0o600)
    finally:
        port.close()
    assert not path.exists()


def test_close_leaves_a_socket_that_replaced_its_own(tmp_path: Path) -> None:
    path = tmp_path / "d.sock"
    port = DealerPort(path, _none).start()
    path.unlink()
    other = socket.socket(socket.AF_UNIX)
    other.bind(str(path))
    try:
        port.close()
        assert path.exists()
    finally:
        other.close()


@pytest.mark.parametrize(("name", "named"), [
    ("missing-folder/d.sock", "cannot create it: No such file or directory"),
    ("a" * 150 + ".sock", "a Unix socket path is at most 107 bytes"),
])
def test_a_path_that_cannot_be_bound_is_named(tmp_path: Path, name: str, named: str) -> None:
    with pytest.raises(DealerPortError) as info:
        DealerPort(tmp_path / name, _none)
    assert str(tmp_path / name) in str(info.value) and named in str(info.value)


def test_a_second_start_leaves_the_running_service_its_client(tmp_path: Path) -> None:
    """Asking whether someone listens must not connect: the running service would take that
    connection as its new dealer client and drop the one it has."""
    from shoe_ctl import events as E

    path = tmp_path / "d.sock"
    first = DealerPort(path, _none).start()
    c = socket.socket(socket.AF_UNIX)
    try:
        c.connect(str(path))
        c.settimeout(5)

        def receive(text: bytes) -> None:
            got = b""
            while text not in got:
                chunk = c.recv(65536)
                assert chunk, "the first client was dropped"
                got += chunk

        first.handle(E.Instruction(E.Signal.IDLE, "yours"))
        receive(b"yours")  # c is the service's client now
        with pytest.raises(DealerPortError, match="in use by another program"):
            DealerPort(path, _none)
        time.sleep(0.3)  # a connection made by the check would have been taken by now
        first.handle(E.Instruction(E.Signal.IDLE, "still yours"))
        receive(b"still yours")
    finally:
        c.close()
        first.close()
