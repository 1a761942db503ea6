"""The floor's command line: ``shoe-ctl floor`` (the consumer and its page) and
``shoe-ctl hil floor`` (:mod:`hil.floor`).

:func:`register` adds ``floor`` to the top-level subcommands (``shoe-ctl hil floor`` is
:func:`hil.floor.register_hil`). The MQTT parts are imported only when the command runs. ``docs/floor.md``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from shoe_ctl.config import ConfigError
from shoe_ctl.floor.config import FloorConfig, load_credentials, load_floor_config, parse_broker
from shoe_ctl.floor.consumer import FloorConsumer, open_floor_journal
from shoe_ctl.floor.page import FloorPage
from shoe_ctl.lifecycle import StopSignals
from shoe_ctl.users import Authenticator, UserStore, users_file_setting

__all__ = ["parse_listen", "register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``floor`` subcommand."""
    p = subparsers.add_parser("floor", help="the floor page: a map of the room's tables and their alerts",
                              description="Follow every table of a room on the floor's MQTT broker and serve "
                              "the floor page: a map of the tables by pit in floor words, coloured by what "
                              "matters, alerts by severity; a signed-in floor supervisor acknowledges.")
    p.add_argument("--config", default=None, metavar="PATH",
                   help="a table.toml whose [floor] gives broker, room, ca_file and the room's "
                   "[[floor.pits]] (flags override)")
    p.add_argument("--broker", default=None, metavar="URL", help="mqtt://host:port or mqtts://host:port")
    p.add_argument("--room", default=None, metavar="ROOM")
    p.add_argument("--credentials", default=None, metavar="FILE",
                   help="the floor user's credentials file (TOML username/password, mode 0600)")
    p.add_argument("--ca-file", default=None, metavar="FILE", help="TLS: the CA of the broker's certificate")
    p.add_argument("--listen", default="127.0.0.1:8090", metavar="HOST:PORT",
                   help="where the page is served (default 127.0.0.1:8090)")
    p.add_argument("--token", default=None, help="required off loopback (or SHOE_CTL_FLOOR_TOKEN)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="a name the page is opened by besides an IP address and this machine's names "
                   "(repeatable; other Host headers get 403)")
    p.add_argument("--journal", default=None, metavar="PATH", help="the floor journal (acknowledgements)")
    p.add_argument("--users", default=None, metavar="FILE",
                   help="the floor's users file (shoe-ctl users): alerts are acknowledged by a named floor "
                   "supervisor with a PIN (default: [users] file of --config; without one none is taken)")
    p.set_defaults(func=run)


def parse_listen(value: str) -> tuple[str, int]:
    """``--listen HOST:PORT`` (``[::1]:8090`` for IPv6; an empty host is loopback) -> (host, port).

    :raises ValueError: naming the option, for a missing or bad port (0..65535).
    """
    host, sep, port = value.strip().rpartition(":")
    if not sep or not port.isascii() or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen {value!r}: expected HOST:PORT with a port 0..65535 (e.g. 127.0.0.1:8090)")
    return host.strip("[]") or "127.0.0.1", int(port)


def run(args: argparse.Namespace) -> int:
    """Run the consumer and the page until Ctrl-C / SIGTERM. Exit 2 on a configuration error."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        cfg = load_floor_config(args.config) if args.config else FloorConfig()
        host, port, tls = parse_broker(args.broker or cfg.broker)
        room = args.room or cfg.room
        creds = load_credentials(args.credentials) if args.credentials else None
        listen_host, listen_port = parse_listen(args.listen)
        token = os.environ.get("SHOE_CTL_FLOOR_TOKEN") or args.token
        journal = open_floor_journal(args.journal, room) if args.journal else None
        consumer = FloorConsumer(host=host, port=port, room=room, credentials=creds, tls=tls,
                                 ca_file=args.ca_file or cfg.ca_file, journal=journal)
        users = args.users or (users_file_setting(args.config) if args.config else None)
        auth = None
        if users:
            store = UserStore(users)
            store.load()
            auth = Authenticator(store, lambda code, message: logging.getLogger("shoe_ctl.floor").warning(
                "%s: %s", code, message))
        page = FloorPage(consumer, host=listen_host, port=listen_port, token=token,
                         allowed_hosts=tuple(args.allow_host), authenticator=auth, pits=cfg.pits)
    except (ConfigError, ValueError, OSError) as exc:
        print(f"shoe-ctl floor: {exc}", file=sys.stderr)
        return 2
    signals = StopSignals(whole_process=bool(getattr(args, "whole_process", False)))
    try:
        with signals:
            try:
                consumer.start()
                page.start()
                print(f"floor page: {page.url}", file=sys.stderr, flush=True)
                while not signals.stop.wait(0.5):
                    pass
            finally:
                signals.stopping()
                page.close()
                consumer.close()
                if journal is not None:
                    journal.close()
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"shoe-ctl floor: {exc}", file=sys.stderr)
        return 2
    return 0
