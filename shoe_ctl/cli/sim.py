"""``shoe-ctl sim``: run a virtual shoe and print the URL to connect to; stops on Ctrl-C.

``shoe-ctl sim [--transport pty|tcp] [--link PATH] [--port N] [--seed S] [--faults SPEC]
[--serial S] [--pairing] [--state DIR] [--pace SECONDS | --keys]``. ``--pairing``: the shoe takes
a pairing secret from ``shoe-ctl pair``; ``--state DIR`` keeps it (``DIR/secret``) and the
shoe's counts (``DIR/state.json``) as the bridge keeps its own, so the simulator started again
from the folder is the same paired shoe powered up again. With ``--pace`` the shoe dispenses a
card every SECONDS (a new seeded deck when it runs empty); with ``--keys`` a person pulls the
cards from the keyboard, one key per card, with faults on keys (:data:`KEYS`; a terminal is put
in cbreak mode, any other stdin is read byte by byte); with neither the shoe only answers the
host. The first line on stdout is the URL (a pty symlink path, or ``socket://127.0.0.1:PORT``);
what each key did goes to stderr. See docs/service.md, *Rehearsing a real shoe by hand*.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from drivers.shoe_bridge import BridgeError, SecretFile, StateFile
from hil.deck import Deck
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.cli.args import Subparsers
from shoe_ctl.cli.sim_keys import KeyPad


def register(subparsers: Subparsers) -> None:
    """Add the ``sim`` subcommand."""
    p = subparsers.add_parser("sim", help="run a virtual shoe and print the URL to connect to",
                              description="Run a virtual shoe (pty or TCP) until Ctrl-C; prints its URL first.")
    p.add_argument("--transport", choices=("pty", "tcp"), default="pty", help="pty (default) or tcp")
    p.add_argument("--link", metavar="PATH", help="stable symlink for the pty (default: a temporary path)")
    p.add_argument("--port", type=int, default=0, help="TCP port (default: any free port)")
    p.add_argument("--seed", type=int, default=0, help="deck order and fault seed (default 0)")
    p.add_argument("--faults", default="", metavar="SPEC", help="fault spec, see docs/protocol.md")
    p.add_argument("--serial", default="VS-0001", help="the serial number the shoe reports (default VS-0001)")
    p.add_argument("--pairing", action="store_true",
                   help="pairing mode: the shoe takes a secret from shoe-ctl pair (kept while it runs, or in --state)")
    p.add_argument("--state", metavar="DIR", default=None,
                   help="keep the shoe's pairing secret (DIR/secret, 0600) and counts (DIR/state.json): started "
                   "again with the same DIR it is the same paired shoe (default: they last while it runs)")
    p.add_argument("--pace", type=float, default=0.0, metavar="SECONDS",
                   help="dispense a card every SECONDS (default: never)")
    p.add_argument("--keys", action="store_true",
                   help="pull cards from the keyboard: space/Enter/p one card, 1-9 that many; c corrupt the next "
                   "card's frame, u unplug/plug back, r reboot the shoe, j jam/clear, b shoe button, n new deck, "
                   "s scramble (then the cards gathered and Enter), ? help, q or end of input quit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the shoe until SIGINT/SIGTERM (or ``q`` or the end of the input with ``--keys``); exit 0
    (2 for a bad --faults, --serial, --link, --state or --port, or --keys with --pace, named)."""
    if args.keys and args.pace > 0:
        print("shoe-ctl sim: --keys and --pace: choose one (the keyboard or the timer pulls the cards)",
              file=sys.stderr)
        return 2

    if args.link is not None and os.path.lexists(args.link) and not os.path.islink(args.link):
        # the pty's link replaces what is at the path and is removed at the end: only a symlink
        # (one left by an earlier run) may be there, never a file or a folder a slip named
        print(f"shoe-ctl sim: --link {args.link}: exists and is not a symlink; refusing to replace it "
              "(give a new path, e.g. /tmp/shoe)", file=sys.stderr)
        return 2
    kept = _kept_secret(args.state)
    if isinstance(kept, str):
        print(f"shoe-ctl sim: --state {args.state}: {kept}", file=sys.stderr)
        return 2
    secrets, secret = kept
    counts = StateFile(Path(args.state)) if args.state is not None else None
    try:
        restored = counts.load() if counts is not None else None
    except BridgeError as exc:
        print(f"shoe-ctl sim: --state {args.state}: {exc}", file=sys.stderr)
        return 2
    try:
        shoe = VirtualShoe(Deck.seeded(args.seed), transport=args.transport, link_path=args.link,
                           port=args.port, faults=args.faults, seed=args.seed, serial=args.serial,
                           pairing=args.pairing, secret=secret, on_secret=_keeper(secrets, secret),
                           record=False)
    except ValueError as exc:  # a bad --faults spec or --serial
        print(f"shoe-ctl sim: {exc}", file=sys.stderr)
        return 2
    if counts is not None:
        _keep_counts(shoe, counts, restored)
    try:
        shoe.start()
    except OSError as exc:  # a --link in a missing folder, a --port in use
        shoe.close()
        print(f"shoe-ctl sim: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        with shoe:
            print(shoe.url, flush=True)
            print(f"virtual shoe {shoe.serial} on {shoe.url} ({args.transport}); {_pairing(args, secrets, secret)}; "
                  "Ctrl-C to stop", file=sys.stderr, flush=True)
            if args.keys:
                KeyPad(shoe, seed=args.seed, out=sys.stderr).run(sys.stdin, stop)
                return 0
            decks = 0
            while not stop.wait(args.pace if args.pace > 0 else 0.5):
                if args.pace > 0:
                    if shoe.remaining() == 0:
                        decks += 1
                        shoe.reload(Deck.seeded(args.seed + decks))
                    shoe.pull()
    finally:
        if counts is not None:  # the epoch and dispense counter of a counter reset with no event since
            counts.save(shoe.device.kept(), None)
    return 0


def _kept_secret(state: str | None) -> tuple[SecretFile | None, bytes | None] | str:
    """``(the secret file, the secret kept in it or None)`` of ``--state``, ``(None, None)``
    without one; a text naming the file and what to do when it cannot be used (others may read
    it, not a secret, a folder this user cannot write)."""
    if state is None:
        return None, None
    secrets = SecretFile(Path(state))
    try:
        secret = secrets.load()
        secrets.check_writable()  # before the shoe takes a secret it could not keep
    except BridgeError as exc:
        return str(exc)
    return secrets, secret


def _keep_counts(shoe: VirtualShoe, counts: StateFile, restored: tuple[tuple[int, int, int, int, int], object] | None
                 ) -> None:
    """Start ``shoe`` from the counts kept in ``counts`` (a power-up: the boot count + 1, the
    sequence numbers and counters going on; docs/protocol.md section 12) and keep them there
    again before each event goes out, as a shoe keeps them in its own memory. The unacked events
    are not kept (the virtual shoe offers no ``keeps-buffer``)."""
    device = shoe.device
    if restored is not None:
        device.restore(restored[0], (), time.monotonic())
    counts.save(device.kept(), None)
    device.on_event = lambda _msg: counts.save(device.kept(), None)


def _keeper(secrets: SecretFile | None, kept: bytes | None) -> Callable[[bytes], None] | None:
    """The shoe's ``on_secret``: each new secret (a pairing, a rotation) written to ``secrets``
    before the shoe takes it; the one loaded from it is not written again."""
    if secrets is None:
        return None

    def keep(secret: bytes) -> None:
        if secret != kept:
            secrets.save(secret)

    return keep


def _pairing(args: argparse.Namespace, secrets: SecretFile | None, secret: bytes | None) -> str:
    """What the shoe's pairing is, for its first line on stderr."""
    if secret is not None:
        assert secrets is not None
        return (f"paired (secret kept in {secrets.path}" +
                (": pairing mode takes no new secret, shoe-ctl pair rotates it)" if args.pairing else ")"))
    if not args.pairing:
        return "not paired (protocol version 1)"
    if secrets is None:
        return "in pairing mode; the secret it takes lasts while it runs (--state DIR keeps it)"
    return f"in pairing mode; the secret it takes is kept in {secrets.path}"
