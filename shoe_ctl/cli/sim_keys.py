"""``shoe-ctl sim --keys``: a person deals from the virtual shoe with the keyboard.

One key per card, and the faults a bench engineer rehearses on keys (:data:`KEYS`). On a terminal
the keys are read one by one (cbreak mode: no Enter needed; Ctrl-C still stops); any other stdin
(a pipe, a FIFO) is read byte by byte the same way, and its end quits. What each key did is one
line on ``out``.
See docs/service.md, *Rehearsing a real shoe by hand*.
"""

from __future__ import annotations

import os
import random
import select
import sys
import threading
from typing import Any, TextIO

from hil.deck import Deck
from shoe_ctl.rules.cards import Card

__all__ = ["KEYS", "KeyPad"]

KEYS: dict[str, str] = {
    "space, Enter, p": "pull one card",
    "1-9": "pull that many cards",
    "c": "corrupt the next card's frame on the line (the host drops it and asks again)",
    "u": "unplug the cable / plug it back",
    "r": "reboot the shoe (its unacked events are lost; the host reports the gap)",
    "j": "report a jam / clear it",
    "b": "press the shoe's button",
    "n": "load a new shuffled deck",
    "s": "scramble: then the cards gathered, by number or name, and Enter (s 3 8 Kd): the stub and them, "
         "shuffled, are the shoe's new stub",
    "?, h": "this help",
    "q, Ctrl-D, end of input": "quit",
}
"""Every key of the keypad and what it does."""


class _CorruptNext:
    """The line's outgoing noise for one frame: flips a byte in the middle of the next frame
    written (never to 0, the frame delimiter), then puts the line's own noise back."""

    def __init__(self, line: Any) -> None:
        self.line = line
        self.inner = line.noise_out
        self.counts = self.inner.counts

    def maybe_delay(self) -> None:
        self.inner.maybe_delay()

    def apply(self, data: bytes) -> bytes:
        self.line.noise_out = self.inner
        out = bytearray(self.inner.apply(data))
        if len(out) > 2:
            i = len(out) // 2
            out[i] = out[i] ^ 0x55 or out[i] ^ 0xAA
        return bytes(out)


class KeyPad:
    """Turns keys into actions on a :class:`hil.virtual_shoe.VirtualShoe`.

    :param shoe: the started shoe. :param seed: seeds each new deck (``seed + decks``).
    :param out: where each action is said (default stderr).
    """

    def __init__(self, shoe: Any, *, seed: int = 0, out: TextIO | None = None) -> None:
        self.shoe = shoe
        self.seed = seed
        self.out = out if out is not None else sys.stderr
        self.decks = 0
        self.pulled = 0
        self.corrupt_next = False
        self.jammed = False
        self.scramble: str | None = None  # the text typed after ``s``, until Enter
        self.numbered: dict[int, Any] = {}  # card number (as said on ``card N out``) -> card

    def say(self, text: str) -> None:
        self.out.write(f"sim: {text}\n")
        self.out.flush()

    def help(self) -> None:
        self.say("keys: " + "; ".join(f"{k}: {v}" for k, v in KEYS.items()))

    # ------------------------------------------------------------------ actions

    def key(self, ch: str) -> bool:
        """Do what ``ch`` means; False for quit. Unknown keys are said and ignored. After ``s``
        the keys up to Enter name the cards gathered for the scramble (:meth:`scrambled`)."""
        if self.scramble is not None:
            if ch in "\r\n":
                text, self.scramble = self.scramble, None
                self.scrambled(text)
            elif ch == "\x04":
                self.scramble = None
                return self.key(ch)
            else:
                self.scramble += ch
            return True
        if ch == "s":
            self.scramble = ""
            self.say("scramble: the cards gathered (numbers as in 'card N out', or names like Kd), then Enter")
        elif ch in " \r\np":
            self.pull(1)
        elif ch in "123456789":
            self.pull(int(ch))
        elif ch == "c":
            self.corrupt_next = True
            self.say("the next card's frame will be corrupted on the line")
        elif ch == "u":
            if self.shoe.plugged:
                self.shoe.unplug()
                self.say("cable unplugged (u plugs it back)")
            else:
                self.shoe.replug()
                self.say("cable plugged back in")
        elif ch == "r":
            self.shoe.reboot(lose_unacked=True)
            self.say("shoe rebooted (unacked events lost)")
        elif ch == "j":
            self.jammed = not self.jammed
            self.shoe.inject_fault("jam", cleared=not self.jammed)
            self.say("jam reported" if self.jammed else "jam cleared")
        elif ch == "b":
            self.shoe.press(1)
            self.say("shoe button pressed")
        elif ch == "n":
            self.new_deck()
        elif ch in "?h":
            self.help()
        elif ch in ("q", "\x04"):
            self.say("quit")
            return False
        else:
            self.say(f"key {ch!r} does nothing (? for help)")
        return True

    def scrambled(self, text: str) -> None:
        """Load the stub left in the shoe and the cards named in ``text`` (numbers of cards pulled,
        ``card N out``, or card names such as ``Kd``), shuffled (seeded), as the new stub: what the
        dealer does for a scramble (docs/service.md). A token naming no card pulled from this deck
        is said and nothing is loaded."""
        left = self.shoe.device.deck.cards()
        pulled = {c.code: c for c in self.shoe.device.deck.dealt()}
        chosen: dict[int, Any] = {}
        for token in text.replace(",", " ").split():
            card = self.numbered.get(int(token)) if token.isdigit() else None
            if card is None and not token.isdigit():
                try:
                    card = Card.parse(token)
                except ValueError:
                    card = None
            if card is None or card.code not in pulled:
                self.say(f"scramble: {token!r} is no card pulled from this deck; nothing loaded (s to try again)")
                return
            chosen[card.code] = card
        cards = [*left, *chosen.values()]
        self.decks += 1
        random.Random(self.seed + self.decks).shuffle(cards)
        self.shoe.reload(Deck(cards))
        self.say(f"scrambled stub loaded: {len(left)} from the shoe and {len(chosen)} gathered, "
                 f"{self.shoe.remaining()} cards")

    def new_deck(self) -> None:
        self.decks += 1
        self.shoe.reload(Deck.seeded(self.seed + self.decks))
        self.say(f"new deck loaded (deck {self.decks + 1}, {self.shoe.remaining()} cards)")

    def pull(self, n: int) -> None:
        """Pull ``n`` cards (a new deck first when the shoe is empty)."""
        for _ in range(n):
            if self.shoe.remaining() == 0:
                self.new_deck()
            if self.corrupt_next:
                self.corrupt_next = False
                with self.shoe._lock:  # the card's frame is the next one written
                    self.shoe.line.noise_out = _CorruptNext(self.shoe.line)
                    card = self.shoe.pull()
                note = " (its frame corrupted)"
            else:
                card = self.shoe.pull()
                note = ""
            self.pulled += 1
            self.numbered[self.pulled] = card
            if len(self.numbered) > 104:  # only this deck's cards can be gathered: keep two decks' worth
                del self.numbered[min(self.numbered)]
            self.say(f"card {self.pulled} out: {card}{note}, {self.shoe.remaining()} left")

    # ------------------------------------------------------------------ the loop

    def run(self, stream: Any, stop: threading.Event) -> None:
        """Read keys from ``stream`` until ``q``, Ctrl-D, the end of the input or ``stop``; a
        terminal in cbreak mode for the time (restored after)."""
        fd = stream.fileno()
        restore = None
        if os.isatty(fd):
            import termios
            import tty

            restore = termios.tcgetattr(fd)
            tty.setcbreak(fd, termios.TCSANOW)  # not TCSAFLUSH: keys typed ahead are kept
        self.say("dealing by hand: space/Enter/p pulls a card, ? for the keys, q quits")
        try:
            while not stop.is_set():
                ready, _, _ = select.select([fd], [], [], 0.2)
                if not ready:
                    continue
                data = os.read(fd, 64)
                if not data:  # the end of a pipe or file: nobody is left to pull a card
                    self.say("end of input: quit")
                    return
                for ch in data.decode("latin-1"):
                    if not self.key(ch):
                        return
        finally:
            if restore is not None:
                import termios

                termios.tcsetattr(fd, termios.TCSADRAIN, restore)
