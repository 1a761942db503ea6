"""``shoe-ctl pair``: give the table's shoe a new pairing secret and keep it (0600).

``shoe-ctl pair [--config PATH] [--port URL] [--serial S] [--timeout SECONDS]``. With no secret
stored for the shoe it is a first pairing: the shoe must be in its pairing mode (a physical
step on the shoe), and it must answer with the configured serial. With a secret stored it is a
rotation: the new secret goes inside the authenticated session, hidden. Either way the new secret
is stored only once the shoe answers under it, and nothing is sent before a trial write proves
the secret's folder writable. Run it with the service stopped (the service holds
the port). The protocol: docs/protocol.md, "Pairing"; the threat model: docs/security.md.
"""

from __future__ import annotations

import argparse
import queue
import sys
from pathlib import Path

from drivers.exc import ShoeError
from drivers.shoe import ShoeLink
from shoe_ctl.cli.args import Subparsers, add_table_shoe, seconds
from shoe_ctl.config import load_table_config
from shoe_ctl.events import LinkChanged
from shoe_ctl.rules.profiles import ProfileError
from shoe_ctl.service import shoes
from shoe_ctl.service.shoe_secrets import SecretError, SecretStore, new_secret
from shoe_ctl.users import (
    TILT_ROLES,
    Authenticator,
    AuthError,
    UserFileError,
    UserStore,
    users_file_setting,
)


def register(subparsers: Subparsers) -> None:
    """Add ``pair`` to the CLI."""
    p = subparsers.add_parser("pair", help="pair the table's shoe (or rotate its secret)",
                              description="Give the table's shoe a new pairing secret and store it (0600). "
                              "A first pairing needs the shoe in its pairing mode; with a secret stored, the "
                              "secret is rotated. Run it with the service stopped.")
    add_table_shoe(p)
    p.add_argument("--serial", default=None, help="the shoe's serial number instead of [shoe] serial")
    p.add_argument("--timeout", type=seconds, default=5.0, help="seconds to wait for the shoe (default 5)")
    p.add_argument("--user", default=None, help="the technician pairing (needed with a [users] file; the PIN is asked)")
    p.add_argument("--pin-stdin", action="store_true", help="read the PIN as one line from standard input")
    p.set_defaults(func=pair)


def _technician(args: argparse.Namespace) -> str | None:
    """With a ``[users] file``: the technician's name once ``--user`` and the PIN check out
    (docs/compliance.md, "People and roles"); None without one.

    :raises PermissionError: no ``--user``, a wrong PIN, a lockout or another role.
    """
    import getpass

    path = users_file_setting(args.config)
    if path is None:
        return None
    if not args.user:
        raise PermissionError("pairing a shoe is a technician's: give --user NAME (the PIN is asked)")
    pin = sys.stdin.readline().rstrip("\n") if args.pin_stdin else getpass.getpass("PIN: ")
    try:
        user = Authenticator(UserStore(path)).authenticate(args.user, pin, "shoe-ctl pair")
    except (AuthError, UserFileError) as exc:
        raise PermissionError(str(exc)) from None
    if user.role not in TILT_ROLES:
        raise PermissionError(f"{user.name} is a {user.role.value}: pairing a shoe is a technician's")
    return user.name


def _say(text: str) -> None:
    print(f"shoe-ctl pair: {text}", file=sys.stderr, flush=True)


def _refusals(events: queue.Queue[object]) -> set[str]:
    """The ``refused`` codes of the link's events so far (docs/protocol.md, "What the host refuses")."""
    found: set[str] = set()
    while True:
        try:
            event = events.get_nowait()
        except queue.Empty:
            return found
        if isinstance(event, LinkChanged) and event.refused:
            found.add(event.refused)


def pair(args: argparse.Namespace) -> int:
    """Pair or rotate; 0 when the shoe answers under its new secret and the secret is stored,
    1 when the shoe does not (the stored secret is then unchanged), 2 for a configuration error
    or a secret folder this user cannot write (checked before anything is sent to the shoe)."""
    try:
        cfg = load_table_config(Path(args.config))
        who = _technician(args)
    except (ProfileError, PermissionError) as exc:
        _say(str(exc))
        return 2
    if who is not None:
        _say(f"pairing as the technician {who}")
    url = args.port or cfg.shoe.url
    serial = args.serial or cfg.shoe.serial
    if url == shoes.SIM:
        _say("[shoe] url = \"sim\": the built-in virtual shoe is paired by the table itself; nothing to do")
        return 0
    if not serial:
        _say(f"{args.config}: no serial number: set [shoe] serial there to the table's shoe (or give --serial; "
             "shoe-ctl doctor names the serial an unpaired shoe gives)")
        return 2
    store = SecretStore(cfg.shoe.secrets)
    try:
        old = store.load(serial)
        store.check_writable(serial)  # before the shoe takes a secret the table could not keep
    except SecretError as exc:
        _say(str(exc))
        return 2
    shoes.register_url_handlers()
    events: queue.Queue[object] = queue.Queue()
    link = ShoeLink(url, events, baudrate=cfg.shoe.baudrate, secret=old, serial=serial)
    new = new_secret()
    try:
        link.start()
        try:
            info = link.wait_connected(args.timeout)
        except TimeoutError:
            if old is not None and "unpaired" in _refusals(events):
                _say(f"shoe {serial} at {url} answers unpaired (protocol version 1): it has lost the secret this "
                     f"table keeps (a factory reset, or a virtual shoe started again without its --state), so "
                     f"it cannot be rotated. Pairing it again is a new table key: delete "
                     f"{store.path(serial)}, put the shoe in pairing mode and pair it, then enrol the decks "
                     "again (their seals are made with the old key; docs/build-a-shoe.md, Enrolment)")
                return 1
            sealed = link.stats.sealed_unchecked
            if old is None and sealed:
                _say(f"shoe {serial} at {url} answers sealed frames ({sealed} in {args.timeout} s): it is paired with "
                     "a secret this host does not have; it holds a secret already and takes no new one in pairing "
                     f"mode. Restore the key file {store.path(serial)} from the host that paired it; or reset the shoe (the bridge and shoe-ctl "
                     "sim: delete the secret file in their state folder) and pair it again, a new table key (the "
                     "decks are enrolled again; docs/protocol.md section 14, \"A host without the secret\")")
                return 1
            what = ("is it on, on this port, and paired with this table's secret?" if old is not None else
                    "is it on, on this port, in pairing mode, and is its serial the configured one? A shoe that "
                    "holds a secret already (paired before) takes no new one in pairing mode: reset it (the "
                    "bridge and shoe-ctl sim: delete the secret file in their state folder)")
            _say(f"shoe {serial} at {url} did not answer within {args.timeout} s: {what}")
            return 1
        try:
            link.pair(new, args.timeout)
        except (TimeoutError, ShoeError) as exc:
            mode = "" if old is not None else " (a first pairing needs the shoe in its pairing mode)"
            _say(f"shoe {serial} did not answer under the new secret{mode}: {exc}; the stored secret is unchanged")
            return 1
    finally:
        link.close()
    try:
        path = store.save(serial, new)
    except SecretError as exc:
        _say(f"the shoe took the new secret but it cannot be stored: {exc}; pair it again")
        return 1
    print(f"shoe {info.serial} {'rotated' if old is not None else 'paired'}: secret in {path} (mode 0600)")
    return 0
