"""``shoe-ctl users``: the table's named users and their roles (docs/compliance.md, "People and
roles").

``shoe-ctl users add NAME --role ROLE``, ``list``, ``remove NAME``, ``passwd NAME`` keep the users
file (``[users] file`` of the table configuration, or ``--file``). A PIN (6..12 digits) is asked
twice on the terminal, or read as one line from standard input with ``--pin-stdin``; only its
Argon2 hash is stored. ``list`` shows names and roles, never a hash. Exit status 0, 1 when the
user or file is refused (the message says why), 2 for bad usage.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from shoe_ctl.cli.args import Subparsers, default_config_path
from shoe_ctl.rules.profiles import ProfileError
from shoe_ctl.users import NAME_RE, Role, User, UserFileError, UserStore, check_pin, users_file_setting

if TYPE_CHECKING:
    from shoe_ctl.users import UserStore


def register(subparsers: Subparsers) -> None:
    """Add ``users`` to the CLI."""
    p = subparsers.add_parser("users", help="the table's named users, their roles and PINs",
                              description="Keep the users file: named users with a role and an Argon2-hashed PIN.")
    p.add_argument("--config", default=str(default_config_path()), help="table configuration ([users] file)")
    p.add_argument("--file", default=None, help="users file instead of [users] file")
    sub = p.add_subparsers(dest="users_command", metavar="ACTION", required=True)
    a = sub.add_parser("add", help="add a user with a role and a PIN")
    a.add_argument("name")
    a.add_argument("--role", required=True, choices=[r.value for r in Role])
    a.add_argument("--pin-stdin", action="store_true", help="read the PIN as one line from standard input")
    a.set_defaults(func=add)
    sub.add_parser("list", help="list the users and their roles").set_defaults(func=list_users)
    r = sub.add_parser("remove", help="remove a user")
    r.add_argument("name")
    r.set_defaults(func=remove)
    w = sub.add_parser("passwd", help="give a user a new PIN")
    w.add_argument("name")
    w.add_argument("--pin-stdin", action="store_true", help="read the PIN as one line from standard input")
    w.set_defaults(func=passwd)


def _say(text: str) -> None:
    print(f"shoe-ctl users: {text}", file=sys.stderr, flush=True)


def _store(args: argparse.Namespace) -> UserStore:
    path = args.file or users_file_setting(args.config)
    if not path:
        raise ValueError(f"{args.config}: no [users] file set (or give --file)")
    return UserStore(path)


def _pin(args: argparse.Namespace) -> str:
    if args.pin_stdin:
        pin = sys.stdin.readline().rstrip("\n")
    else:
        pin = getpass.getpass("PIN (6-12 digits): ")
        if getpass.getpass("PIN again: ") != pin:
            raise ValueError("the two PINs differ")
    check_pin(pin)
    return pin


def _run(args: argparse.Namespace, action: Callable[[UserStore], int]) -> int:
    try:
        store = _store(args)
        return int(action(store))
    except (UserFileError, ProfileError, ValueError) as exc:
        _say(str(exc))
        return 1


def add(args: argparse.Namespace) -> int:
    """Add a user; 1 for a name taken or a bad PIN."""
    def go(store: UserStore) -> int:
        users = store.load(missing_ok=True)
        if not NAME_RE.fullmatch(args.name):
            raise ValueError(f"name {args.name[:40]!r} is not 1..32 of a-z 0-9 . _ -")
        if any(u.name == args.name for u in users):
            raise ValueError(f"a user {args.name!r} exists already (passwd changes the PIN)")
        users.append(User(args.name, Role(args.role), store.hash_pin(_pin(args))))
        store.save(users)
        print(f"added {args.name} ({args.role})")
        return 0

    return _run(args, go)


def list_users(args: argparse.Namespace) -> int:
    """Print ``NAME ROLE`` per user."""
    def go(store: UserStore) -> int:
        for u in store.load():
            print(f"{u.name}\t{u.role.value}")
        return 0

    return _run(args, go)


def remove(args: argparse.Namespace) -> int:
    """Remove a user; 1 when there is none of that name."""
    def go(store: UserStore) -> int:
        users = store.load()
        kept = [u for u in users if u.name != args.name]
        if len(kept) == len(users):
            raise ValueError(f"no user {args.name[:40]!r}")
        store.save(kept)
        print(f"removed {args.name}")
        return 0

    return _run(args, go)


def passwd(args: argparse.Namespace) -> int:
    """Give a user a new PIN; 1 when there is none of that name or the PIN is bad."""
    from dataclasses import replace

    def go(store: UserStore) -> int:
        users = store.load()
        if not any(u.name == args.name for u in users):
            raise ValueError(f"no user {args.name[:40]!r}")
        pin_hash = store.hash_pin(_pin(args))
        store.save([replace(u, pin_hash=pin_hash) if u.name == args.name else u for u in users])
        print(f"new PIN for {args.name}")
        return 0

    return _run(args, go)
