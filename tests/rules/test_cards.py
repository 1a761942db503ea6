"""Card values: parsing, printing, ordering as one value."""

import pytest

from shoe_ctl.rules.cards import Card, CardError, card_text, full_deck, parse_card, parse_cards


def test_parse_and_print_round_trip_every_card():
    for card in full_deck():
        assert Card.parse(str(card)) == card


def test_ten_accepted_as_10():
    assert Card.parse("10d") == Card.parse("Td")
    assert parse_cards("10dAs??") == [Card.parse("Td"), Card.parse("As"), None]


def test_suit_order_clubs_diamonds_hearts_spades():
    assert Card.parse("2c") < Card.parse("2d") < Card.parse("2h") < Card.parse("2s") < Card.parse("3c")
    assert max(full_deck()) == Card.parse("As")


def test_unknown_card():
    assert parse_card("??") is None
    assert card_text(None) == "??"
    with pytest.raises(CardError):
        Card.parse("??")


@pytest.mark.parametrize("bad", ["", "1s", "Ax", "AsK", "11c", "Z"])
def test_bad_card_text_names_the_text(bad):
    with pytest.raises(CardError) as info:
        Card.parse(bad)
    assert repr(bad) in str(info.value)
