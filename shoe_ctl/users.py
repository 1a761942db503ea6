"""Named users with roles, their PINs (Argon2) and who may decide what (docs/compliance.md,
"People and roles").

A users file (TOML, ``[[user]]`` tables of ``name``, ``role`` and ``pin``: an Argon2id hash, never
the PIN) lists the people of a table; ``shoe-ctl users add|list|remove|passwd`` keeps it.
:func:`required_role` says which roles may make a dealer input (a latched alert is the floor's to
clear, a tilt the technician's); :class:`Authenticator` checks a name and PIN, locking a user and a
source out after repeated wrong PINs. Nothing here logs or returns a PIN or its hash.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from shoe_ctl.config import read_toml
from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.input_spec import SPECS, ack_targets
from shoe_ctl.rules.profiles import ProfileError

__all__ = [
    "AuthError", "Authenticator", "Role", "User", "UserFileError", "UserStore", "check_pin", "required_role",
    "role_of_source", "user_of_source",
]

NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,31}")
"""A user name: lower-case letters, digits, ``.``, ``_``, ``-``; 1..32 characters."""
PIN_RE = re.compile(r"[0-9]{6,12}")
"""A PIN: 6..12 digits."""
MAX_FILE_BYTES = 1 << 20
MAX_FAILURES = 5
"""Wrong PINs in a row after which a user is locked out for :data:`LOCKOUT_S`."""
MAX_SOURCE_FAILURES = 10
"""Wrong PINs (any names) from one source after which that source is locked out."""
LOCKOUT_S = 300.0


class Role(StrEnum):
    """The roles of a card room's people at a table."""

    DEALER = "dealer"
    FLOOR = "floor-supervisor"
    TECHNICIAN = "technician"
    SURVEILLANCE = "surveillance"


FLOOR_ROLES = frozenset({Role.FLOOR})
"""Who rules a misdeal or an irregularity, acknowledges a latched alert, overrides a STOP."""
TILT_ROLES = frozenset({Role.TECHNICIAN})
"""Who clears a tilt (once the release verifies again) and pairs a shoe."""
HOLE_CARD_ROLES = frozenset({Role.FLOOR, Role.SURVEILLANCE})
"""Who sees the downcards in a recall."""


class UserFileError(ValueError):
    """A users file that cannot be used; the message names the file and the problem."""


class AuthError(Exception):
    """A name and PIN refused: ``message`` for the person (never says which of the two was wrong),
    ``status``: ``"wrong"``, ``"locked"`` or ``"role"``."""

    def __init__(self, message: str, status: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class User:
    """A person: ``name`` (the id journaled with every decision) and ``role``; ``pin_hash`` is
    kept for verification only and never leaves this module's objects."""

    name: str
    role: Role
    pin_hash: str


def check_pin(pin: str) -> None:
    """:raises ValueError: a PIN that is not 6..12 digits."""
    if not isinstance(pin, str) or not PIN_RE.fullmatch(pin):
        raise ValueError("a PIN is 6 to 12 digits")


# --------------------------------------------------------------------------- roles


def required_role(action: DealerAction, args: Mapping[str, Any], alerts: Sequence[Mapping[str, Any]],
                  tilt_code: str | None = None) -> frozenset[Role] | None:
    """The roles that may make the input ``action`` with ``args`` while ``alerts`` (the machine's
    alert dicts: ``id``, ``code``, ``latched``) are up; None: anyone at the table (no credential).

    - the input's own role, its :data:`shoe_ctl.input_spec.SPECS` row's ``role`` (``misdeal``: a
      floor supervisor);
    - acknowledging the tilt's alert (``tilt_code``): a technician;
    - acknowledging a latched alert (the ones :func:`~shoe_ctl.input_spec.ack_targets` names): a floor supervisor (the
      dealer cannot clear what the floor must decide);
    - ``new-hand`` with ``override``, ``gap-cards`` ``burned``: a floor supervisor (the decision
      is in the arguments).
    """
    spec = SPECS.get(action)
    if spec is not None and spec.role is not None:
        return frozenset({Role(spec.role)})
    if action is DealerAction.ACK_ALERT:
        hit = ack_targets(alerts, args)
        if tilt_code is not None and any(a.get("code") == tilt_code for a in hit):
            return TILT_ROLES
        if any(a.get("latched") for a in hit):
            return FLOOR_ROLES
        return None
    if action is DealerAction.NEW_HAND and args.get("override") is True:
        return FLOOR_ROLES
    if action is DealerAction.GAP_CARDS and args.get("burned") is True:
        return FLOOR_ROLES
    return None


def what_needs(action: DealerAction, roles: Iterable[Role]) -> str:
    """Words for a refusal: ``"'ack-alert' needs a floor-supervisor"``."""
    return f"'{action.value}' needs a {' or '.join(sorted(r.value for r in roles))}"


_SOURCE_USER = re.compile(r" user=([a-z0-9._-]+) role=([a-z-]+)$")


def user_of_source(source: str | None) -> str | None:
    """The user id an authenticated input's ``source`` names (``... user=NAME role=ROLE``)."""
    m = _SOURCE_USER.search(source or "")
    return m.group(1) if m else None


def role_of_source(source: str | None) -> Role | None:
    """The role an authenticated input's ``source`` names, or None."""
    m = _SOURCE_USER.search(source or "")
    if m is None:
        return None
    try:
        return Role(m.group(2))
    except ValueError:
        return None


def parse_credential(value: object) -> tuple[str, str]:
    """``(user, pin)`` of a credential ``{"user": NAME, "pin": DIGITS}`` sent with an input.

    :raises ValueError: not such an object (the message never holds the PIN).
    """
    if not isinstance(value, Mapping) or set(value) != {"user", "pin"}:
        raise ValueError('expected {"user": NAME, "pin": DIGITS}')
    name, pin = value["user"], value["pin"]
    if not isinstance(name, str) or not isinstance(pin, str) or len(name) > 64 or len(pin) > 64:
        raise ValueError("user and pin must be short texts")
    return name, pin


def signed(ev: DealerInput, user: User) -> DealerInput:
    """``ev`` with its ``source`` naming ``user`` (the id and role journaled with it)."""
    return DealerInput(ev.action, ev.seat, ev.args, source=f"{ev.source or '?'} user={user.name} role={user.role.value}")


# --------------------------------------------------------------------------- the file


def users_file_setting(config: str | os.PathLike[str]) -> str | None:
    """``[users] file`` of a table configuration (None: no named users, anyone at the table
    decides: a bench; doctor warns).

    :raises ProfileError: an unknown key or a value that is not a path.
    """
    sect = read_toml(Path(config)).get("users", {})
    if not isinstance(sect, Mapping):
        raise ProfileError(str(config), "users", "is not a table", "a [users] table")
    for key in sect:
        if key != "file":
            raise ProfileError(str(config), f"users.{key}", "unknown key", "keys file")
    value = sect.get("file")
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ProfileError(str(config), "users.file", "is not a file path", "a file path")
    return value


class UserStore:
    """The users file at ``path``. :meth:`load` reads and checks it; :meth:`save` writes it
    atomically (mode 0600 for a new file, the old mode and group kept otherwise).

    ``hasher``: the Argon2 hasher for new PINs (default: argon2-cffi's defaults, Argon2id)."""

    def __init__(self, path: str | os.PathLike[str], hasher: PasswordHasher | None = None) -> None:
        self.path = Path(path)
        self.hasher = hasher or PasswordHasher()

    def load(self, missing_ok: bool = False) -> list[User]:
        """The users, in file order.

        :raises UserFileError: absent (unless ``missing_ok``: empty), not a regular file, writable
            by its group or readable by others (mode), not TOML, an unknown key, a bad name, role
            or hash, or a duplicate name.
        """
        src = str(self.path)
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            if missing_ok:
                return []
            raise UserFileError(f"users file {src}: not found (shoe-ctl users add NAME --role ROLE makes it)") from None
        except OSError as exc:
            raise UserFileError(f"users file {src}: cannot read ({exc.strerror or exc})") from None
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise UserFileError(f"users file {src}: not a regular file")
            if st.st_mode & 0o027:
                raise UserFileError(f"users file {src}: mode {stat.S_IMODE(st.st_mode):04o} lets others read it or "
                                    "its group write it; chmod 0600 (or 0640 with the service's group)")
            data = fh.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise UserFileError(f"users file {src}: larger than {MAX_FILE_BYTES} bytes")
        try:
            doc = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
            raise UserFileError(f"users file {src}: not TOML ({exc})") from None
        if set(doc) - {"user"} or not isinstance(doc.get("user", []), list):
            raise UserFileError(f"users file {src}: only [[user]] tables are allowed")
        users: list[User] = []
        seen: dict[str, int] = {}
        for i, entry in enumerate(doc.get("user", []), 1):
            where = f"users file {src}: user {i}"
            if not isinstance(entry, dict) or set(entry) != {"name", "role", "pin"}:
                raise UserFileError(f"{where}: needs exactly name, role and pin")
            name, role, pin = entry["name"], entry["role"], entry["pin"]
            if not isinstance(name, str) or not NAME_RE.fullmatch(name):
                raise UserFileError(f"{where}: name {str(name)[:40]!r} is not 1..32 of a-z 0-9 . _ -")
            if name in seen:
                raise UserFileError(f"{where}: the name {name!r} is already user {seen[name]}; names are unique")
            try:
                r = Role(role)
            except ValueError:
                raise UserFileError(f"{where} ({name}): role {str(role)[:40]!r} is not one of "
                                    f"{', '.join(x.value for x in Role)}") from None
            if not isinstance(pin, str) or not pin.startswith("$argon2"):
                raise UserFileError(f"{where} ({name}): pin is not an Argon2 hash")
            seen[name] = i
            users.append(User(name, r, pin))
        return users

    def save(self, users: Sequence[User]) -> None:
        """Write ``users`` (replacing the file in one rename).

        :raises UserFileError: the file cannot be written.
        """
        lines = []
        for u in users:
            lines.append(f'[[user]]\nname = "{u.name}"\nrole = "{u.role.value}"\npin = "{u.pin_hash}"\n')
        text = "# shoe-ctl users (shoe-ctl users add|list|remove|passwd); PINs are Argon2 hashes\n\n" + "\n".join(lines)
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            old = os.stat(self.path)
        except FileNotFoundError:
            old = None
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                if old is not None:
                    os.fchmod(fh.fileno(), stat.S_IMODE(old.st_mode) & 0o640)
                    try:
                        os.fchown(fh.fileno(), old.st_uid, old.st_gid)
                    except PermissionError:
                        pass
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            raise UserFileError(f"users file {self.path}: cannot write ({exc.strerror or exc})") from None

    def hash_pin(self, pin: str) -> str:
        """The Argon2 hash of a checked PIN. :raises ValueError: not 6..12 digits."""
        check_pin(pin)
        return self.hasher.hash(pin)


# --------------------------------------------------------------------------- authentication


class Authenticator:
    """Checks a name and PIN against a users file (read again when it changes), with lockouts:
    :data:`MAX_FAILURES` wrong PINs in a row lock that user, :data:`MAX_SOURCE_FAILURES` lock the
    source (a display client, the dealer port), each for :data:`LOCKOUT_S` seconds.

    ``report(code, message)`` is told every refusal (``auth-refused``, ``auth-locked``) to be
    journaled and shown; its message names the user and the source, never the PIN.
    Thread-safe."""

    def __init__(self, store: UserStore, report: Callable[[str, str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.report = report or (lambda _code, _message: None)
        self.clock = clock
        self._lock = threading.Lock()
        self._users: dict[str, User] = {}
        self._stamp: tuple[int, ...] | None = None
        self._fails: dict[str, int] = {}
        self._locked: dict[str, float] = {}
        self._source_fails: dict[str, int] = {}
        self._dummy = store.hasher.hash("000000")  # a wrong name costs the same as a wrong PIN

    def _current(self) -> dict[str, User]:
        try:
            st = os.stat(self.store.path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_mode, st.st_ino)
        except OSError:
            stamp = None
        if stamp != self._stamp or not self._users:
            self._users = {u.name: u for u in self.store.load()}
            self._stamp = stamp
        return self._users

    def authenticate(self, name: object, pin: object, source: str) -> User:
        """The user ``name`` when ``pin`` is theirs.

        :raises AuthError: a wrong or missing name or PIN, a locked user or source.
        :raises UserFileError: the users file cannot be used.
        """
        shown = name if isinstance(name, str) and NAME_RE.fullmatch(name) else "?"
        now = self.clock()
        with self._lock:
            for key in (f"user:{shown}", f"source:{source}"):
                until = self._locked.get(key)
                if until is not None and now < until:
                    raise AuthError(f"locked out after repeated wrong PINs; try again in {until - now:.0f} s",
                                    "locked")
                if until is not None:
                    del self._locked[key]
            try:
                users = self._current()
            except UserFileError as exc:
                self.report("users-file-refused", f"{exc}: no credential is taken until it is fixed")
                raise
        user = users.get(shown)
        ok = False
        try:
            ok = self.store.hasher.verify(user.pin_hash if user else self._dummy, pin if isinstance(pin, str) else "")
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            ok = False
        if ok and user is not None:
            with self._lock:
                self._fails.pop(shown, None)
                self._source_fails.pop(source, None)
            return user
        with self._lock:
            self._fails[shown] = n = self._fails.get(shown, 0) + 1
            self._source_fails[source] = s = self._source_fails.get(source, 0) + 1
            locked = []
            if n >= MAX_FAILURES:
                self._locked[f"user:{shown}"] = now + LOCKOUT_S
                self._fails.pop(shown, None)
                locked.append(f"user {shown}")
            if s >= MAX_SOURCE_FAILURES:
                self._locked[f"source:{source}"] = now + LOCKOUT_S
                self._source_fails.pop(source, None)
                locked.append(source)
            if len(self._fails) > 1024:  # names tried that do not exist: keep the list bounded
                self._fails.clear()
            if len(self._source_fails) > 1024:
                self._source_fails.clear()
        self.report("auth-refused", f"wrong user or PIN for {shown!r} from {source} ({n} of {MAX_FAILURES})")
        if locked:
            self.report("auth-locked", f"{' and '.join(locked)} locked out for {LOCKOUT_S:.0f} s after repeated "
                        "wrong PINs")
            raise AuthError(f"locked out after repeated wrong PINs; try again in {LOCKOUT_S:.0f} s", "locked")
        raise AuthError("wrong user or PIN", "wrong")
