"""Irregularity decisions: one pure function per clause family of the rule texts (RP-10-A to -G,
house 16.1-16.27), each returning a frozen :class:`Ruling`: the dealer's instruction, the clause
ids and the changes to the hand (:meth:`Ruling.apply`); the machine then plans what is left of the
street again. Every clause and interpretation: docs/rules.md and docs/irregularities.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum

from shoe_ctl.rules.cards import Card
from shoe_ctl.rules.games import Game, open_pair
from shoe_ctl.rules.hand import HandError, HandState, street_index
from shoe_ctl.rules.profiles import (
    AbsentRule,
    ExposedDowncardRule,
    ExposedSeventhRule,
    PrematureRule,
    RuleProfile,
)
from shoe_ctl.values import FrozenValue, frozen_value

__all__ = [
    "Action",
    "Effect",
    "Ruling",
    "absent_player",
    "aside_after_betting",
    "burn_error",
    "card_count",
    "card_off_table",
    "clause_without_code",
    "exposed_downcard",
    "exposed_seventh",
    "open_pair_fourth",
    "premature_cards",
    "wrong_bring_in",
]


class Action(StrEnum):
    """What the dealer must do, in one word."""

    CONTINUE = "continue"  # nothing to change: deal on as planned
    UPCARD_STANDS = "upcard-stands"  # the exposed card stands as the upcard, 3rd card down
    MISDEAL = "misdeal"  # collect every card, the hand is dealt again
    DEAD_HAND = "dead-hand"  # the seat's hand is dead (ante returned where the ruling says so)
    REPLACE = "replace"  # take the exposed card out of play, deal a replacement face down
    CARD_STANDS = "card-stands"  # the card stays where it is
    KILL = "kill"  # kill the seat's hand now
    DEAL_TO_EMPTY_SEAT = "deal-to-empty-seat"  # keep dealing to the seat until it is killed
    RESHUFFLE = "reshuffle"  # premature cards back into the stub, reshuffle, redeal, no burn
    SET_ASIDE = "set-aside"  # premature cards out of play on the set-aside pile
    MOVE_CARDS = "move-cards"  # put the cards back in their normal positions
    RETURN_BET = "return-bet"  # return the wrong bring-in's bet, the correct player acts
    BET_STANDS = "bet-stands"
    NO_CODE = "no-code"  # a clause about conduct or betting; the product does nothing for it


@frozen_value
class Effect(FrozenValue):
    """One change to the hand record.

    ``op`` is one of:

    - ``to-up``: player ``seat_index``'s downcard ``index`` (default the last) becomes an upcard;
      with ``street`` ``"3rd"`` the seat's 3rd-street upcard will be dealt down (exposed hole card).
    - ``kill`` / ``dead``: the seat's hand is killed / dead.
    - ``out-of-play``: player's last ``face`` card leaves the hand for good; the seat is owed a card.
    - ``return``: player's last ``face`` card goes back into the stub (RP-5-D).
    - ``aside``: player's last ``face`` card (or, with no seat, the last burn of ``street``)
      goes to the set-aside pile (house 16.16).
    - ``next-face``: the seat's next card is dealt ``face``.
    - ``no-bet``: the seat may not bet or raise (house 16.17).
    - ``burn-to-seat``: the last burn of ``street`` is really the seat's ``face`` card.
    - ``seat-to-burn``: the seat's last ``face`` card is really a burn of ``street``.
    - ``burn-out-of-play``: the last burn of ``street`` leaves the burn pile for good.
    - ``unseat``: an extra burn that stood (house 16.15): the card recorded for player
      ``seat_index`` is a burn of ``street``, and the cards recorded for the players after it (in
      the order dealt) go each to the player before; the last of them is owed a card.
    - ``reshuffled``: the stub was reshuffled and reloaded (RP-5-D): its identities are fixed as
      :attr:`HandState.new_stub` and the count of cards dealt since the load restarts.
    - ``reseat``: a missing burn that stood (house 16.15): the card recorded as the burn of
      ``street`` and the cards recorded for the players from ``seat_index`` on go, in the order
      dealt, to those players (the next player owed one gets the last); no burn on the street.
    """

    op: str
    seat_index: int | None = None
    face: str | None = None
    street: str | None = None
    index: int | None = None

    def __init__(self, op: str, seat_index: int | None = None, face: str | None = None,
                 street: str | None = None, index: int | None = None) -> None:
        put = self._put
        put[0](self, op)
        put[1](self, seat_index)
        put[2](self, face)
        put[3](self, street)
        put[4](self, index)


@frozen_value
class Ruling(FrozenValue):
    """A decision: what the dealer does and what it changes.

    :param clauses: clause ids applied, alert-code form (``"RP-10-A"``, ``"house-16.2"``).
    :param action: what the dealer must do.
    :param instruction: the dealer's instruction, in words (never names a downcard).
    :param seat_index: the player concerned (player order), if any.
    :param card_effect: the effect on that seat's cards, in words.
    :param stub_delta: cards the ruling takes out of (negative) or puts back into (positive) the
        stub beyond the street's plan (e.g. -1 for a replacement card, +2 for two returned cards).
    :param effects: the changes :meth:`apply` makes to the hand record, in order.
    :param refund_ante: the seat's ante is returned (house 16.2).
    :param no_burn: the street is (re)dealt without another burn (RP-5-D).
    :param aside_per_active: after the betting round, one card per active player goes aside
        (house 16.16; see :func:`aside_after_betting`).
    :param all_in_option: the seat may move all-in before betting begins (house 16.23, 16.24).
    :param first_to_act_rule: a rule that changes who acts first (``"house-16.22"``).
    :param posts_bring_in: an absent player dealt the bring-in card still posts it (Rule 30).
    :param floor: the rule texts leave the case open: call the floor.
    :param big_bet_option: the players may make the larger bet on 4th street (house 16.8, open
        pair, 7 Card Stud high).
    """

    clauses: tuple[str, ...]
    action: Action
    instruction: str
    seat_index: int | None = None
    card_effect: str = ""
    stub_delta: int = 0
    effects: tuple[Effect, ...] = ()
    refund_ante: bool = False
    no_burn: bool = False
    aside_per_active: bool = False
    all_in_option: bool = False
    first_to_act_rule: str | None = None
    posts_bring_in: bool = False
    floor: bool = False
    big_bet_option: bool = False

    def __init__(self, clauses: tuple[str, ...], action: Action, instruction: str,
                 seat_index: int | None = None, card_effect: str = "", stub_delta: int = 0,
                 effects: tuple[Effect, ...] = (), refund_ante: bool = False, no_burn: bool = False,
                 aside_per_active: bool = False, all_in_option: bool = False,
                 first_to_act_rule: str | None = None, posts_bring_in: bool = False, floor: bool = False,
                 big_bet_option: bool = False) -> None:
        put = self._put
        put[0](self, clauses)
        put[1](self, action)
        put[2](self, instruction)
        put[3](self, seat_index)
        put[4](self, card_effect)
        put[5](self, stub_delta)
        put[6](self, effects)
        put[7](self, refund_ante)
        put[8](self, no_burn)
        put[9](self, aside_per_active)
        put[10](self, all_in_option)
        put[11](self, first_to_act_rule)
        put[12](self, posts_bring_in)
        put[13](self, floor)
        put[14](self, big_bet_option)

    @property
    def code(self) -> str:
        """The alert code: the first clause id."""
        return self.clauses[0]

    def apply(self, hand: HandState) -> None:
        """Make the ruling's changes to ``hand``, in order.

        :raises HandError: when the hand has no card where an effect expects one.
        """
        if self.effects:
            hand.keep_all_seats()  # the effects change seats in place (HandState.change_seat)
        for e in self.effects:
            _apply(hand, e)


def _apply(hand: HandState, e: Effect) -> None:
    i = e.seat_index
    if e.op in ("kill", "dead", "to-up", "next-face", "no-bet") and i is None:
        raise HandError(f"effect {e.op} needs a player index")
    if e.op == "kill":
        assert i is not None
        if hand.seats[i].in_hand:
            hand.kill(i)
    elif e.op == "dead":
        assert i is not None
        if hand.seats[i].in_hand:
            hand.declare_dead(i)
    elif e.op == "to-up":
        assert i is not None
        seat = hand.seats[i]
        k = e.index if e.index is not None else len(seat.down) - 1
        if not 0 <= k < len(seat.down):
            raise HandError(f"player {i} has no downcard {k} to turn up")
        seat.up.append(seat.down.pop(k))
        if e.street == "3rd":
            seat.exposed_hole = True
    elif e.op == "next-face":
        assert i is not None
        hand.seats[i].next_face = e.face
    elif e.op == "no-bet":
        assert i is not None
        hand.seats[i].no_bet = True
    elif e.op == "out-of-play":
        hand.dead_cards.append(_take(hand, i, e.face))
    elif e.op == "return":
        hand.return_to_stub(i, e.face)
    elif e.op == "aside":
        hand.withdraw_to_aside(i, e.face, burn_street=e.street)
    elif e.op == "burn-to-seat":
        card = _take_burn(hand, e.street)
        assert i is not None
        (hand.seats[i].up if e.face == "up" else hand.seats[i].down).append(card)
    elif e.op == "seat-to-burn":
        card = _take(hand, i, e.face)
        st = e.street or hand.street or "3rd"
        hand.burns.setdefault(st, []).append(card)
        hand.burn_pile.append((st, card))
    elif e.op == "reshuffled":
        hand.new_stub = hand.stub_candidates()
        hand.dealt_since_load = 0
    elif e.op == "reseat":
        _reseat(hand, e)
    elif e.op == "unseat":
        _unseat(hand, e)
    elif e.op == "burn-out-of-play":
        hand.dead_cards.append(_take_burn(hand, e.street))
    else:
        raise HandError(f"unknown effect {e.op!r}")


def _take(hand: HandState, i: int | None, face: str | None) -> Card | None:
    if i is None:
        raise HandError("this effect needs a player index")
    pile = hand.seats[i].up if face == "up" else hand.seats[i].down
    if not pile:
        raise HandError(f"player {i} has no {face} card")
    return pile.pop()


def _take_burn(hand: HandState, street: str | None) -> Card | None:
    if street is None:
        raise HandError("this effect needs a street")
    return hand.take_burn(street)


def _seat(hand: HandState, i: int) -> int:
    if not 0 <= i < len(hand.seats):
        raise HandError(f"no player index {i} (0..{len(hand.seats) - 1})")
    return hand.seats[i].seat


# --------------------------------------------------------------------------- RP-10-A, 16.1, 16.2


def exposed_downcard(profile: RuleProfile, hand: HandState, i: int, *, both: bool = False,
                     which: int | None = None) -> Ruling:
    """A hole card dealt face up on the initial deal (3rd street), to player ``i``.

    - RP-10-A (TDA): the exposed card is the player's upcard and the 3rd card is dealt down; it
      counts for the bring-in. Two exposed hole cards are not covered by RP-10-A: the product
      calls it a misdeal and calls the floor (interpretation).
    - house 16.1: cash game: the 3rd card is dealt face down to compensate (the exposed card stands
      as the upcard); tournament (profile ``tournament``): misdeal.
    - house 16.2: both hole cards exposed: the hand is dead and the ante returned (cash and
      tournament: 16.2 is the more specific clause).

    Call it when the dealer reports the exposure, with the exposed card recorded as player ``i``'s
    downcard ``which`` (0 or 1; default the last one dealt); ``both``: the seat's two downcards
    were both dealt face up — also when they are reported one at a time: a hole card exposed at a
    seat whose other hole card was already ruled its upcard (``SeatState.exposed_hole``) is the
    second of two. If the seat already holds its 3rd-street upcard, a single exposed hole card
    cannot become the upcard any more: the ruling asks for the floor and changes nothing.

    :raises HandError: for an unknown player index.
    """
    seat = _seat(hand, i)
    # A second hole card exposed after the first was ruled the upcard (reported one at a time):
    # both hole cards were dealt face up.
    both = both or hand.seats[i].exposed_hole
    late = bool(hand.seats[i].up) and not both
    to_up = (Effect("to-up", i, street="3rd", index=which),)
    if profile.exposed_downcard is ExposedDowncardRule.TDA:
        if both:
            return Ruling(("RP-10-A",), Action.MISDEAL, "Both hole cards exposed: misdeal, call the floor",
                          i, "hand collected with every other", floor=True)
        if late:
            return Ruling(("RP-10-A",), Action.CARD_STANDS,
                          f"Seat {seat}: hole card exposed after the upcard was dealt: call the floor", i, "",
                          floor=True)
        return Ruling(
            ("RP-10-A",), Action.UPCARD_STANDS,
            f"Seat {seat}: the exposed card is the upcard; deal the 3rd card face down", i,
            "exposed hole card becomes the upcard (can be the bring-in); 3rd card down",
            effects=to_up,
        )
    if both:
        return Ruling(
            ("house-16.2",), Action.DEAD_HAND, f"Seat {seat}: both hole cards exposed: dead hand, return the ante",
            i, "hand dead, cards to the muck; the stub is not changed", effects=(Effect("dead", i),),
            refund_ante=True,
        )
    if profile.tournament:
        return Ruling(("house-16.1",), Action.MISDEAL, "Hole card exposed in a tournament: misdeal", i,
                      "every hand collected and redealt")
    if late:
        return Ruling(("house-16.1",), Action.CARD_STANDS,
                      f"Seat {seat}: hole card exposed after the upcard was dealt: call the floor", i, "", floor=True)
    return Ruling(
        ("house-16.1",), Action.UPCARD_STANDS, f"Seat {seat}: deal the 3rd card face down to compensate", i,
        "exposed hole card stands face up; 3rd card down", effects=to_up,
    )


def card_off_table(profile: RuleProfile, hand: HandState, i: int, street: str, *, action_remains: bool = True,
                   face: str | None = None) -> Ruling:
    """house 16.13: a card dealt off the table is an exposed card: a hole card on 3rd street goes
    to :func:`exposed_downcard`, a 7th-street card to :func:`exposed_seventh`; an upcard (the
    3rd-street door card, 4th to 6th) is face up anyway and stands.

    :param face: on 3rd street, whether the card was meant ``"up"`` (the door card) or ``"down"``
        (a hole card); ``None``: the seat's last card recorded, i.e. the door card once the seat
        holds it (unless a hole card already stands as the upcard under RP-10-A / house 16.1).
    :raises HandError: for an unknown street or player.
    """
    street_index(street)
    _seat(hand, i)
    if street == "3rd" and face is None:
        s = hand.seats[i]
        face = "up" if s.up and not s.exposed_hole else "down"
    if street == "3rd" and face == "down":
        r = exposed_downcard(profile, hand, i)
    elif street == "7th":
        r = exposed_seventh(profile, hand, i, action_remains=action_remains)
    else:
        r = Ruling((), Action.CARD_STANDS, "Upcard off the table: put it in front of the player", i, "upcard stands")
    return replace(r, clauses=("house-16.13", *r.clauses))


# --------------------------------------------------------------------------- RP-10-B, 16.21-16.24


def exposed_seventh(profile: RuleProfile, hand: HandState, i: int, *, action_remains: bool) -> Ruling:
    """Player ``i``'s 7th-street card was dealt face up (recorded as that seat's last downcard).

    - RP-10-B (TDA): replaced if betting action remains: the exposed card goes out of play and the
      next card from the stub goes face down to the player (interpretation: the next card; card
      order carries no right, Rule 38). If the replacement would take the stub's last card, the
      card stands face up (interpretation: neither profile deals the last card). No action
      remaining: the card stands; the rest of 7th is dealt down; in an all-in showdown the players
      not at risk expose first.
    - house 16.21: a player all-in: the card stands.
    - house 16.22: the card stands; the high hand using all the up-cards acts first.
    - house 16.23: three or more players in the hand: everyone else's last card face down; the
      exposed player may move all-in before the betting.
    - house 16.24: exactly two players: the other's last card is dealt face up too; if it was
      already dealt down, the exposed player may move all-in before the betting.

    :param action_remains: betting action remains on the hand (two or more players can bet).
    :raises HandError: for an unknown player or a seat without a 7th-street downcard.
    """
    seat = _seat(hand, i)
    s = hand.seats[i]
    if not s.down:
        raise HandError(f"player {i} has no 7th-street card")
    if profile.exposed_seventh is ExposedSeventhRule.TDA:
        owed = sum(1 for k in hand.in_hand() if k != i and hand.needs_card(k, "7th"))
        if action_remains and hand.stub_count() >= owed + 2:
            return Ruling(
                ("RP-10-B",), Action.REPLACE,
                f"Seat {seat}: take the exposed card out of play; deal the next card face down to seat {seat}",
                i, "exposed 7th card out of play, replaced face down", stub_delta=-1,
                effects=(Effect("out-of-play", i, "down"),),
            )
        why = "no betting action remains" if not action_remains else "the stub cannot spare a replacement"
        return Ruling(
            ("RP-10-B",), Action.CARD_STANDS,
            f"Seat {seat}: the exposed card stands ({why}); deal 7th down to the others", i,
            "7th card stands face up", effects=(Effect("to-up", i),),
            floor=action_remains,
        )
    if s.all_in:
        clauses: tuple[str, ...] = ("house-16.21", "house-16.22")
    else:
        clauses = ("house-16.22",)
    others = [k for k in hand.in_hand() if k != i]
    effects: list[Effect] = [Effect("to-up", i)]
    all_in_option = False
    if len(others) >= 2:
        clauses += ("house-16.23",)
        text = f"Seat {seat}: the card stands face up; deal every other last card face down"
        all_in_option = not s.all_in
    elif len(others) == 1:
        clauses += ("house-16.24",)
        other = others[0]
        if hand.needs_card(other, "7th"):
            effects.append(Effect("next-face", other, "up"))
            text = f"Seat {seat}: the card stands face up; deal seat {hand.seats[other].seat}'s last card face up too"
        else:
            all_in_option = not s.all_in
            text = f"Seat {seat}: the card stands face up; the opponent's last card stays down"
    else:
        text = f"Seat {seat}: the card stands face up"
    if all_in_option:
        text += f"; seat {seat} may move all-in before the betting"
    return Ruling(clauses, Action.CARD_STANDS, text, i, "7th card stands face up", effects=tuple(effects),
                  all_in_option=all_in_option, first_to_act_rule="house-16.22")


# --------------------------------------------------------------------------- RP-10-C, 16.9-16.11


def absent_player(profile: RuleProfile, hand: HandState, i: int, *, action_reached: bool,
                  bring_in: bool = False) -> Ruling:
    """Player ``i`` is not at the seat: reported when the initial deal is complete
    (``action_reached`` False) or when the betting reaches the seat (True).

    - RP-10-C with TDA Rule 30: a player not at the seat when the last card of the initial deal
      has gone out has a dead hand: killed at once, not looked at; antes stay in the pot; an absent
      player dealt the bring-in card still posts the bring-in; no 4th-street card. Reported only
      when the action reaches the seat, the hand is killed then (the player was away at the deal).
    - house 16.10 (tournament): the hand is killed when the starting hands have been dealt.
    - house 16.11 (cash): until the hand is killed, cards go on being dealt to the empty seat so
      the others get the cards they would have had.
    - house 16.9 (cash): killed when the betting reaches the seat; the ante and any forced bet
      already made are lost.

    :raises HandError: for an unknown player.
    """
    seat = _seat(hand, i)
    if profile.absent_player is AbsentRule.TDA:
        return Ruling(
            ("RP-10-C", "Rule 30"), Action.KILL,
            f"Seat {seat}: player absent: kill the hand unseen" + ("; the bring-in is posted" if bring_in else ""),
            i, "hand killed, not looked at; no more cards", effects=(Effect("kill", i),), posts_bring_in=bring_in,
        )
    if profile.tournament and not action_reached:
        return Ruling(("house-16.10",), Action.KILL, f"Seat {seat}: player absent after the deal: kill the hand",
                      i, "hand killed; no more cards", effects=(Effect("kill", i),))
    if action_reached:
        return Ruling(("house-16.9",), Action.KILL,
                      f"Seat {seat}: player absent when the action reached the seat: kill the hand; ante and forced bet stay",
                      i, "hand killed; no more cards", effects=(Effect("kill", i),))
    return Ruling(("house-16.11",), Action.DEAL_TO_EMPTY_SEAT,
                  f"Seat {seat}: player absent: go on dealing to the seat until the action reaches it", i,
                  "seat keeps receiving cards until killed")


# --------------------------------------------------------------------------- RP-5-D, 16.16, 16.17


def premature_cards(profile: RuleProfile, hand: HandState, street: str, cards: Sequence[tuple[int, str]], *,
                    burned: bool = True, merged: Sequence[int] = ()) -> Ruling:
    """Cards of ``street`` dealt before the betting on the previous street was complete.

    :param cards: the premature cards as ``(player index, face)``, in the order dealt (each
        recorded as that seat's last card of that face).
    :param burned: the street's burn was taken before them (recorded as the burn of ``street``).
    :param merged: players whose premature card is the final downcard (7th) and has merged with
        their hole cards.

    - RP-10-G points to RP-5-D (TDA): the premature cards go back into the stub, the stub is
      reshuffled (face down, Rule 39-D) and the street is dealt again without another burn: the
      burn already taken stays the street's burn (``no_burn``). A merged final downcard cannot be
      found without exposing the hole cards: it stays as that player's 7th card, counted once (not
      returned; the player gets no other 7th card), and the floor is called (interpretation).
    - house 16.16: the premature cards (burn included) are out of play, on the set-aside pile; when
      the betting round has ended, one more card per player still active goes aside
      (:func:`aside_after_betting`); then a new burn and the street as normal. The set-aside cards
      join the pool of a later shortage (house 16.18).
    - house 16.17 (its "exception to Rule 16.6" read as 16.16, the premature-card rule): a final
      downcard that merged with the player's hole cards stands, and that player may not bet or
      raise (the seventh card is already there).

    :raises HandError: for an unknown street or player.
    """
    street_index(street)
    for i, _ in cards:
        _seat(hand, i)
    merged_set = set(merged) if street == "7th" else set()
    if profile.premature is PrematureRule.TDA:
        kept = [i for i, f in cards if i in merged_set and f == "down"]
        back = [(i, f) for i, f in cards if i not in kept]
        effects = tuple(Effect("return", i, f) for i, f in reversed(back)) + (Effect("reshuffled"),)
        text = f"Premature {street} cards: put them back in the stub, reshuffle the stub, deal {street} again without a burn"
        if kept:
            seats = ", ".join(str(hand.seats[i].seat) for i in kept)
            text += (f"; the final downcard merged with the hole cards of seat {seats} cannot be taken back: it "
                     "stays as the seat's 7th card, which gets no other")
        return Ruling(
            ("RP-5-D", "RP-10-G"), Action.RESHUFFLE, text,
            kept[0] if kept else None, "premature cards taken back from the seats", stub_delta=len(back),
            effects=effects, no_burn=burned, floor=bool(kept),
        )
    stands = [i for i, f in cards if i in merged_set and f == "down"]
    aside = [(i, f) for i, f in cards if i not in stands]
    effects_l = [Effect("aside", i, f) for i, f in reversed(aside)]
    if burned:
        effects_l.append(Effect("aside", None, None, street))
    effects_l += [Effect("no-bet", i) for i in stands]
    clauses: tuple[str, ...] = ("house-16.16",) + (("house-16.17",) if stands else ())
    text = f"Premature {street} cards: set them aside face down; after the betting, one more card aside per active player; then burn and deal"
    if stands:
        text += "; the merged final downcard stands, that player may not bet or raise"
    return Ruling(clauses, Action.SET_ASIDE, text, stands[0] if stands else None,
                  "premature cards out of play (set aside)", effects=tuple(effects_l), aside_per_active=True)


def aside_after_betting(hand: HandState) -> int:
    """house 16.16: the number of extra cards to take aside once the betting round has ended: one
    per player still active (in the hand), to be pulled from the stub with
    :meth:`HandState.put_aside`; never the stub's last card (interpretation: the set-aside cards
    only wait for a shortage, where house 16.18 merges them with the stub's last card, so a stub
    too small to give one per player gives what it can and keeps its last card)."""
    return max(0, min(hand.live_count(), hand.stub_count() - 1))


# --------------------------------------------------------------------------- 16.15 burn errors


def burn_error(profile: RuleProfile, hand: HandState, street: str, *, burns: int, first: int,
               final_card_stands: bool = False, late_card: bool = False) -> Ruling:
    """house 16.15 (TDA Rule 38: exactly one burn per street): two burns, or none, on ``street``.

    The state machine records cards in the order of the street's plan, so the record already shows
    the *normal* positions: with two burns the second burn card is recorded as player ``first``'s
    card (and any card dealt since as the next player's: each really went one seat earlier);
    with none, the card recorded as the burn went to player ``first`` and every following card
    one seat further on. The ruling tells the dealer to move the cards to their normal positions
    (record unchanged). The cards stand (``final_card_stands``) and the record is changed to what
    was dealt — with two burns the extra burn stays a burn, each card dealt since stays with the
    player who got it, and the next player in order is owed a card; with none, the cards dealt
    stay and one card is burned now — when house 16.15 allows it (the error is on the final
    downcard, 7th street, and that card merged with a player's hole cards or was seen) or, under
    TDA, on any street: Rule 38 asks for exactly one burn per street and says the burn is not
    there to keep the order of the cards, so the floor may let the cards dealt stand
    (interpretation).

    What the dealer is told agrees with what is left to deal once the cards stand: with two
    burns found after the street, ``late_card`` (the card read after the street's last, held
    aside) is the card of the player owed one, and the street is out; with no burn, when the
    card the record gave the burn was the last one owed, the street is out and no card is
    burned now.

    :param burns: burns the dealer took (0 or 2).
    :param first: the player who should have received the first card after the burn.
    :param late_card: a card was read after the street's last card (two burns found late).
    :raises HandError: for another burn count, an unknown street or player.
    """
    street_index(street)
    seat = _seat(hand, first)
    if burns not in (0, 2):
        raise HandError(f"a burn error is 0 or 2 burns, got {burns}")
    clauses = ("house-16.15",) if profile.house else ("house-16.15", "Rule 38")
    stands = final_card_stands and (street == "7th" or not profile.house)
    face = "down" if street == "7th" else "up"
    if burns == 2:
        if stands and late_card:
            order = [k for k in hand.in_hand() if k >= first] + [k for k in hand.in_hand() if k < first]
            last = hand.seats[order[-1]].seat
            return Ruling(clauses, Action.CARD_STANDS,
                          f"Two burns on {street}: the extra burn stands; the cards dealt stand; the card read "
                          f"after the street is seat {last}'s; every {street} card is out", first,
                          "the cards dealt stay where they are; the last card read is the last player's",
                          stub_delta=-1, effects=(Effect("unseat", first, face, street),))
        if stands:
            return Ruling(clauses, Action.CARD_STANDS,
                          f"Two burns on {street}: the extra burn stands; the cards dealt stand; deal on", first,
                          "the cards dealt stay where they are; the next player is owed a card", stub_delta=-1,
                          effects=(Effect("unseat", first, face, street),))
        return Ruling(clauses, Action.MOVE_CARDS,
                      f"Two burns on {street}: give the top burn card to seat {seat} and move any card dealt since "
                      "one seat on", first, "the top burn card is the seat's card")
    if stands and sum(hand.needs_card(k, street) for k in hand.in_hand()) <= 1:
        return Ruling(clauses, Action.CARD_STANDS,
                      f"No burn on {street}: the cards dealt stand; every {street} card is out: no card is burned",
                      first, "seats keep the cards they were dealt; the street had no burn",
                      effects=_no_burn_stands(hand, street, first))
    if stands:
        return Ruling(clauses, Action.CARD_STANDS,
                      f"No burn on {street}: the cards dealt stand; burn one card now, then deal on", first,
                      "seats keep the cards they were dealt; the rest of the street as normal",
                      effects=_no_burn_stands(hand, street, first))
    return Ruling(clauses, Action.MOVE_CARDS,
                  f"No burn on {street}: the first card dealt is the burn; move every card one seat back, starting with seat {seat}",
                  first, "cards moved to their normal positions")


def _no_burn_stands(hand: HandState, street: str, first: int) -> tuple[Effect, ...]:
    return (Effect("reseat", first, "down" if street == "7th" else "up", street),)


def _reseat(hand: HandState, e: Effect) -> None:
    # Recorded: burn = c1, then the players from ``first`` on c2, c3, ...; dealt: c1 to the first
    # player, c2 to the next, ... Take the cards back and give them out in the order dealt, with
    # no burn this street; the next player in order is owed a card.
    assert e.seat_index is not None and e.street is not None
    face = e.face or "down"
    order = [k for k in hand.in_hand() if k >= e.seat_index] + [k for k in hand.in_hand() if k < e.seat_index]
    dealt = [k for k in order if not hand.needs_card(k, e.street)]
    owed = [k for k in order if hand.needs_card(k, e.street)]
    cards = [_take_burn(hand, e.street)] + [None] * len(dealt)
    for n, k in enumerate(dealt):
        cards[n + 1] = _take(hand, k, face)
    if not owed:
        raise HandError(f"no player is owed a {e.street} card: the missing burn cannot be re-seated")
    targets = dealt + owed[:1]
    for k, card in zip(targets, cards, strict=True):
        (hand.seats[k].up if face == "up" else hand.seats[k].down).append(card)


def _unseat(hand: HandState, e: Effect) -> None:
    # Recorded: burn c1, then the players from ``first`` on c2, c3, ...; dealt: c1 and c2 burned,
    # c3 to the first player, ... The cards stand where they went; the last player recorded is owed.
    assert e.seat_index is not None and e.street is not None
    face = e.face or "down"
    order = [k for k in hand.in_hand() if k >= e.seat_index] + [k for k in hand.in_hand() if k < e.seat_index]
    dealt = [k for k in order if not hand.needs_card(k, e.street)]
    if not dealt or dealt[0] != e.seat_index:
        raise HandError(f"player {e.seat_index} has no {e.street} card recorded: nothing to move to the burn pile")
    cards = [_take(hand, k, face) for k in dealt]
    st = e.street
    hand.burns.setdefault(st, []).append(cards[0])
    hand.burn_pile.append((st, cards[0]))
    for k, card in zip(dealt, cards[1:], strict=False):
        (hand.seats[k].up if face == "up" else hand.seats[k].down).append(card)


# --------------------------------------------------------------------------- 16.25, 16.26


def card_count(profile: RuleProfile, hand: HandState, i: int, *, showdown: bool) -> Ruling:
    """house 16.25: a hand of eight or more cards is dead; house 16.26: a hand of six or fewer
    cards at the showdown is dead. A community card counts in every hand (house 16.20).

    Under the TDA profile the same counts raise the alert and the floor decides (no TDA text given).

    :raises HandError: for an unknown player.
    """
    seat = _seat(hand, i)
    s = hand.seats[i]
    n = s.card_count + (1 if hand.community_street is not None else 0)
    if n >= 8:
        clause = "house-16.25"
    elif showdown and n <= 6 and s.in_hand:
        clause = "house-16.26"
    else:
        return Ruling(("house-16.25", "house-16.26"), Action.CONTINUE, f"Seat {seat}: {n} cards, in order", i, "")
    if not profile.house:
        return Ruling((clause,), Action.CONTINUE, f"Seat {seat}: {n} cards: call the floor", i, "", floor=True)
    return Ruling((clause,), Action.DEAD_HAND, f"Seat {seat}: {n} cards: dead hand", i, "hand dead",
                  effects=(Effect("dead", i),))


# --------------------------------------------------------------------------- RP-10-F, 16.8


def open_pair_fourth(profile: RuleProfile, hand: HandState) -> Ruling:
    """An open pair on 4th street (two upcards of a rank showing).

    - RP-10-F (TDA): bets are not doubled for a pair showing.
    - house 16.8: players may make the smaller or the larger bet (``big_bet_option``). The house
      text is a 7 Card Stud (high) rule: in stud-8 and razz an open pair does not change the
      limit (interpretation; the usual rule of those games), so the bet stays small there.

    Returns ``CONTINUE`` with the first paired seat in ``seat_index`` (``None`` when no open pair).
    """
    paired = [i for i in hand.in_hand() if len(hand.seats[i].up) >= 2 and open_pair(hand.seats[i].up[:2])]
    first = paired[0] if paired else None
    if not profile.open_pair_bet:
        text = "Open pair on 4th: bets stay small (not doubled)" if paired else "No open pair"
        return Ruling(("RP-10-F",), Action.CONTINUE, text, first)
    if not paired:
        return Ruling(("house-16.8",), Action.CONTINUE, "No open pair", None)
    if hand.game is not Game.STUD:
        return Ruling(("house-16.8",), Action.CONTINUE,
                      f"Open pair on 4th: bets stay small ({hand.game.value}: no larger bet for a pair)", first)
    return Ruling(("house-16.8",), Action.CONTINUE, "Open pair on 4th: the smaller or the larger bet may be made",
                  first, big_bet_option=True)


# --------------------------------------------------------------------------- 16.6


def wrong_bring_in(profile: RuleProfile, hand: HandState, wrong: int, correct: int, *, next_acted: bool) -> Ruling:
    """house 16.6: the wrong player was named the low card and bet. If the next player has not
    acted, the bet is returned and the correct player acts; if the next player has acted, the bet
    stands and play goes on with no further obligation for the correct low card.

    :raises HandError: for unknown players.
    """
    _seat(hand, wrong)
    seat = _seat(hand, correct)
    if next_acted:
        return Ruling(("house-16.6",), Action.BET_STANDS, "Wrong bring-in: the bet stands, play on", wrong,
                      "no change to the cards")
    return Ruling(("house-16.6",), Action.RETURN_BET, f"Wrong bring-in: return the bet; seat {seat} brings it in",
                  correct, "no change to the cards")


# --------------------------------------------------------------------------- clauses without code

_NO_CODE: dict[str, str] = {
    "RP-10-G": "Premature stud cards follow RP-5-D: see premature_cards (TDA profile).",
    "house-16.3": "The bring-in (lowest upcard by suit) is found by games.bring_in and shown; the "
                  "choice to open for a full bet is betting, which the product does not track.",
    "house-16.5": "A bring-in short of chips goes all-in: the dealer reports the all-in; betting minimums "
                  "are not tracked.",
    "house-16.7": "Completing the forced bet is not a raise: betting, not tracked; no code.",
    "house-16.12": "Picking up the upcards before calling is a fold: the dealer reports the fold; no code.",
    "house-16.14": "The display shows the low card, the high hand and open pairs and never achievable "
                   "straights or flushes; raises are the dealer's to announce.",
    "house-16.27": "Calling knowing one is beaten earns no refund: no code.",
}


def clause_without_code(clause: str) -> Ruling:
    """What the product does about a clause that needs no decision code (RP-10-G, house 16.3,
    16.5, 16.7, 16.12, 16.14, 16.27).

    :raises KeyError: for a clause that has a decision function.
    """
    return Ruling((clause,), Action.NO_CODE, _NO_CODE[clause])
