"""The floor's command line: ``shoe-ctl floor`` (the consumer and its page) and
``shoe-ctl hil floor`` (:mod:`hil.floor`).

:func:`register` adds ``floor`` to the top-level subcommands (``shoe-ctl hil floor`` is
:func:`hil.floor.register_hil`). The MQTT parts are imported only when the command runs. ``docs/floor.md``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sqlite3
import sys
import time

from shoe_ctl.config import ConfigError
from shoe_ctl.floor.central import KEEP_DAYS, Replicator, central_view, check_nats_url
from shoe_ctl.floor.config import (
    FloorConfig,
    load_credentials,
    load_floor_config,
    parse_broker_list,
)
from shoe_ctl.floor.consumer import open_consumer, open_floor_journal
from shoe_ctl.floor.page import FloorPage
from shoe_ctl.floor.topics import check_name
from shoe_ctl.lifecycle import StopSignals
from shoe_ctl.service.journal import JournalError, journal_problem
from shoe_ctl.users import Authenticator, UserStore, users_file_setting

__all__ = ["parse_listen", "register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``floor`` subcommand."""
    p = subparsers.add_parser("floor", help="the floor page: a map of the room's tables and their alerts",
                              description="Follow every table of a room on the floor's MQTT broker and serve "
                              "the floor page: a map of the tables by pit in floor words, coloured by what "
                              "matters, alerts by severity; a signed-in floor supervisor acknowledges.")
    p.add_argument("--config", default=None, metavar="PATH",
                   help="a table.toml whose [floor] gives broker(s), room, ca_file and the room's "
                   "[[floor.pits]] (flags override)")
    p.add_argument("--broker", action="append", default=None, metavar="URL",
                   help="mqtt://host:port or mqtts://host:port; repeat for each broker of the room (the floor "
                   "follows every one and says it is online on each: docs/floor.md, \"Two brokers\")")
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
    p.add_argument("--central", default=None, metavar="URL",
                   help="replicate this room's floor to the central NATS JetStream at URL (nats://host:4222; "
                   "docs/floor.md, \"Many properties\"); needs --property")
    p.add_argument("--property", default=None, metavar="NAME", help="this property's name in the central store")
    p.add_argument("--keep-days", type=float, default=KEEP_DAYS, metavar="DAYS",
                   help=f"how long the central store keeps events (default {KEEP_DAYS})")
    p.set_defaults(func=run)
    sub = p.add_subparsers(dest="floor_command", metavar="{central}")
    c = sub.add_parser("central", help="every property, room, table and open alert in the central store",
                       description="List what the central NATS JetStream holds: each property's rooms and tables "
                       "(events stored, the newest, online, state, hand) and their open alerts.")
    c.add_argument("--nats", required=True, metavar="URL", help="the central NATS server (nats://host:4222)")
    c.add_argument("--json", action="store_true", help="print the view as JSON")
    c.set_defaults(func=run_central)


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
        urls = list(args.broker or cfg.broker_urls)
        if len(urls) > 1:  # the same checks as a table's [floor] brokers
            urls = list(parse_broker_list("--broker", {"brokers": urls}))
        room = args.room or cfg.room
        creds = load_credentials(args.credentials) if args.credentials else None
        listen_host, listen_port = parse_listen(args.listen)
        token = os.environ.get("SHOE_CTL_FLOOR_TOKEN") or args.token
        try:
            journal = open_floor_journal(args.journal, room) if args.journal else None
        except (OSError, JournalError, sqlite3.Error) as exc:
            raise ValueError(journal_problem(args.journal, exc)) from None
        replicator = None
        if args.central:
            if not args.property:
                raise ValueError("--central needs --property NAME (this property's name in the central store)")
            replicator = Replicator(check_nats_url(args.central), prop=check_name("--property", args.property),
                                    room=room, keep_days=args.keep_days)
        hook = replicator.offer if replicator is not None else None
        consumer = open_consumer(urls, room=room, credentials=creds, ca_file=args.ca_file or cfg.ca_file,
                                 journal=journal, on_event=hook, on_resent=hook,
                                 on_reset=replicator.new_journal if replicator is not None else None,
                                 gaming_day=cfg.gaming_day)
        if replicator is not None:
            replicator.ask_replay = consumer.ask_replay
            replicator.rows = lambda: consumer.snapshot()["tables"]
            replicator.known_last = lambda table: consumer.known_last(table)
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
                if replicator is not None:
                    replicator.start()
                consumer.start()
                page.start()
                print(f"floor page: {page.url}", file=sys.stderr, flush=True)
                while not signals.stop.wait(0.5):
                    pass
            finally:
                signals.stopping()
                page.close()
                consumer.close()
                if replicator is not None:
                    replicator.close()
                if journal is not None:
                    journal.close()
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"shoe-ctl floor: {exc}", file=sys.stderr)
        return 2
    return 0


def run_central(args: argparse.Namespace) -> int:
    """``shoe-ctl floor central``: print the central store's view. Exit 2 on a bad URL or a server
    that cannot be reached."""
    try:
        view = central_view(check_nats_url(args.nats))
    except Exception as exc:  # noqa: BLE001 - a bad URL, OSError, nats-py's errors: one line, exit 2
        print(f"shoe-ctl floor central: {args.nats}: {exc or type(exc).__name__}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(view, indent=1, sort_keys=True))
        return 0
    props = view["properties"]
    if not props:
        print(f"{args.nats}: the central store holds no floor yet")
    for prop in sorted(props):
        for room in sorted(props[prop]):
            print(f"{prop} {room}")
            for name, t in sorted(props[prop][room].items()):
                when = (time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t["time_us"] / 1e6))
                        if isinstance(t["time_us"], int) else "-")
                online = {True: "online", False: "OFFLINE"}.get(t["online"], "-")
                print(f"  {room}/{name}: {online}, {t['state'] or '-'}, hand {t['hand'] or '-'}, "
                      f"{t['stored']} events stored, newest #{t['seq']} at {when} UTC, {len(t['alerts'])} open alerts")
                for a in t["alerts"]:
                    count = a.get("count") if isinstance(a.get("count"), int) else 1
                    print(f"    {a.get('severity', '?')}: {a.get('code')} (hand {a.get('hand') or '-'}"
                          f"{f', x{count}' if count > 1 else ''}): {a.get('message') or ''}")
    return 0
