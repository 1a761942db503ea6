"""A journal's error names the journal once, whatever the journal is called: ``JournalError``
carries the path it is about and ``journal_problem`` reads that, never the words (docs/journal.md,
"One writing process")."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from shoe_ctl.service.journal import Journal, JournalError, journal_problem

# A name no message could hold by chance, and names that are the first word of an error's text.
MARK = "j-\u03a9\u2042.sqlite3"
WORDS = ("is", "journal", "database", "No", "cannot")


def _with_records(path: Path, table: str = "T1") -> None:
    with Journal(path, table=table, profile="tda") as j:
        for n in range(300):
            j.append_record("note", {"n": n, "pad": "x" * 200})


def _folder(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    Path(name).mkdir()
    return _refused(lambda: Journal(name, table="T1", profile="tda"))


def _pipe(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    os.mkfifo(name)
    return _refused(lambda: Journal(name, table="T1", profile="tda"))


def _foreign(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    Path(name).write_text("not a journal\n")
    return _refused(lambda: Journal(name, table=None, profile=None, readonly=True))


def _missing(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    return _refused(lambda: Journal(name, table=None, profile=None, readonly=True))


def _no_folder(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    return _refused(lambda: Journal(f"gone/{name}", table="T1", profile="tda"))


def _held(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    with Journal(name, table="T1", profile="tda"):
        return _refused(lambda: Journal(name, table="T1", profile="tda"))


def _other_table(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    _with_records(Path(name), table="T9")
    return _refused(lambda: Journal(name, table="T1", profile="tda"))


def _newer_format(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    _with_records(Path(name))
    with sqlite3.connect(name) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'format'")
        db.execute("DELETE FROM meta WHERE key = 'identity_crc'")
    db.close()
    return _refused(lambda: Journal(name, table=None, profile=None, readonly=True))


def _damaged(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    _with_records(Path(name))
    with open(name, "r+b") as fh:  # pages 4-7 of a journal of 300 records: b-tree pages
        fh.seek(3 * 4096)
        fh.write(b"\xa5" * (4 * 4096))
    return _refused(lambda: Journal(name, table=None, profile=None, readonly=True))


def _lock_unopenable(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    Path(f"{name}.lock").mkdir()
    return _refused(lambda: Journal(name, table="T1", profile="tda"))


def _closed(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    j = Journal(name, table="T1", profile="tda")
    j.close()
    return _refused(lambda: j.append_record("note", {}))


def _read_only(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    _with_records(Path(name))
    with Journal(name, table=None, profile=None, readonly=True) as j:
        return _refused(lambda: j.append_record("note", {}))


def _no_table(name: str, patch: pytest.MonkeyPatch) -> BaseException:  # an argument error: it names no file
    return _refused(lambda: Journal(name, table=None, profile=None))


def _medium(name: str, patch: pytest.MonkeyPatch) -> BaseException:  # an OSError of the medium about the journal file
    return PermissionError(13, "Permission denied", name)


def _full(name: str, patch: pytest.MonkeyPatch) -> BaseException:  # an OSError naming no file
    return OSError(28, "No space left on device")


def _sqlite(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    return sqlite3.OperationalError("database is locked")


def _unwritable_folder(name: str, patch: pytest.MonkeyPatch) -> BaseException:  # a read-only medium, or no permission
    _deny_access(patch, Path("."))
    return _refused(lambda: Journal(name, table="T1", profile="tda"))


def _unwritable_file(name: str, patch: pytest.MonkeyPatch) -> BaseException:
    _with_records(Path(name))
    _deny_access(patch, Path(name))
    return _refused(lambda: Journal(name, table="T1", profile="tda"))


def _not_private(name: str, patch: pytest.MonkeyPatch) -> BaseException:  # a mode 0644 that cannot be made 0600
    _with_records(Path(name))
    os.chmod(name, 0o644)

    def refuse(path: str | os.PathLike[str], mode: int) -> None:
        raise PermissionError(1, "Operation not permitted", os.fspath(path))

    patch.setattr(os, "chmod", refuse)
    return _refused(lambda: Journal(name, table="T1", profile="tda"))


def _deny_access(patch: pytest.MonkeyPatch, denied: Path) -> None:
    """``os.access`` says no to writing ``denied`` (as for a user without the right; root has it)."""
    real = os.access
    patch.setattr(os, "access", lambda p, mode: False if Path(p).resolve() == denied.resolve() else real(p, mode))


def _refused(opening: Callable[[], object]) -> BaseException:
    with pytest.raises((JournalError, OSError)) as refused:
        opening()
    return refused.value


KINDS = {f.__name__.strip("_"): f for f in (
    _folder, _pipe, _foreign, _missing, _no_folder, _held, _other_table, _newer_format, _damaged,
    _lock_unopenable, _closed, _read_only, _no_table, _medium, _full, _sqlite, _unwritable_folder,
    _unwritable_file, _not_private)}


def _said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, name: str) -> tuple[BaseException, str]:
    """The error of ``kind`` for a journal called ``name`` in a folder of its own (the working
    folder, so the journal's path is its name), and its words as ``journal_problem`` says them."""
    folder = tmp_path / f"{kind}-{WORDS.index(name) if name in WORDS else 'mark'}"
    folder.mkdir()
    monkeypatch.chdir(folder)
    with pytest.MonkeyPatch.context() as patch:  # os.access, os.chmod: undone once the error is made
        exc = KINDS[kind](name, patch)
    given = f"gone/{name}" if kind == "no_folder" else name
    return exc, journal_problem(given, exc)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_of_error_names_the_journal_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    exc, said = _said(tmp_path, monkeypatch, kind, MARK)
    assert said.count(MARK) == 1, said
    if isinstance(exc, JournalError) and exc.path is not None:
        assert said == str(exc)  # the journal's own words: said as they are
        assert exc.path.name == MARK
    else:
        assert said.startswith(f"journal {'gone/' if kind == 'no_folder' else ''}{MARK}: "), said


@pytest.mark.parametrize("name", WORDS)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_journal_called_like_the_first_word_of_an_error_is_named_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, name: str) -> None:
    """The same words as for any other name (was: an error beginning with the journal's name was
    taken as naming it, so ``database disk image is malformed`` about a journal called
    ``database`` came out without the journal)."""
    _exc, marked = _said(tmp_path, monkeypatch, kind, MARK)
    _exc, said = _said(tmp_path, monkeypatch, kind, name)
    assert said == marked.replace(MARK, name)


def test_only_the_path_an_error_carries_counts() -> None:
    """Words that begin with the path, without the path carried, are not taken as naming it; an
    error carrying another file's path gets the journal's before it; an ``OSError`` about the
    journal file gives its reason without the file a second time."""
    said = journal_problem("/srv/t", ValueError("/srv/t: cannot be read"))
    assert said == "journal /srv/t: /srv/t: cannot be read"
    said = journal_problem("/srv/t", JournalError("/srv/u: cannot be read", path="/srv/u"))
    assert said == "journal /srv/t: /srv/u: cannot be read"
    said = journal_problem("./t", JournalError("t: cannot be read", path="t"))
    assert said == "t: cannot be read"
    said = journal_problem("/srv/t", PermissionError(13, "Permission denied", "/srv/t.lock"))
    assert said == "journal /srv/t: [Errno 13] Permission denied: '/srv/t.lock'"
    said = journal_problem("/srv/t", OSError(18, "Invalid cross-device link", "/srv/t", None, "/mnt/t"))
    assert said.startswith("journal /srv/t: [Errno 18]") and "/mnt/t" in said
