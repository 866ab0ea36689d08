"""An exception raised inside a game's own code surfaces as a GameError that names the method
and the history, with the original chained -- whatever the exception, whatever the method,
even when the history cannot print itself."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import cfrkit
from cfrkit import GameError, compile_game

from probe_game import Probe, ProbeHistory

CALLS = {  # method -> the depths where the walk calls it
    "is_terminal": [0, 1, 2, 3],
    "is_chance": [0, 1, 2],
    "current_player": [1, 2],
    "actions": [1, 2],
    "infoset_key": [1, 2],
    "chance_outcomes": [0],
    "utilities": [3],
    "child": [0, 1, 2],
}


class GameSpecificError(Exception):
    pass


EXCEPTIONS = [TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError,
              RuntimeError, RecursionError, NotImplementedError, AssertionError,
              GameSpecificError, GameError, OverflowError, StopIteration, UnicodeDecodeError]


def make(kind: type, text: str) -> BaseException:
    if kind is UnicodeDecodeError:
        return UnicodeDecodeError("utf-8", b"\xff", 0, 1, text or "bad")
    return kind(text)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(CALLS)), st.data(), st.sampled_from(EXCEPTIONS),
       st.text(max_size=2000))
def test_any_exception_in_any_method_is_reported_with_method_and_history(method, data, kind, text):
    depth = data.draw(st.sampled_from(CALLS[method]))
    exc = make(kind, text)
    with pytest.raises(GameError) as info:
        compile_game(Probe(method, depth, raise_=exc))
    message = str(info.value)
    assert info.value.__cause__ is exc  # chained: the user's traceback is kept
    assert f"{method}(" in message and f"raised {kind.__name__}" in message, message
    assert "history [" in message and "ProbeHistory" in message, message
    assert len(message) < 400, message


def test_root_raising_is_reported():
    exc = KeyError("no root")
    with pytest.raises(GameError, match=r"root\(\) raised KeyError: 'no root'") as info:
        compile_game(Probe("root", None, raise_=exc))
    assert info.value.__cause__ is exc


def test_a_type_error_inside_utilities_is_not_called_a_wrong_type():
    # the old walk reported any TypeError from utilities() as "utilities() is not a sequence"
    class Typo(ProbeHistory):
        def utilities(self):
            return (len(3), 0.0)  # a bug in the game: TypeError

        def child(self, action):
            return Typo(self.game, self.path + (action,))

    game = Probe()
    game.root = lambda: Typo(game, ())
    with pytest.raises(GameError) as info:
        compile_game(game)
    message = str(info.value)
    assert "utilities() raised TypeError: object of type 'int' has no len()" in message
    assert "not a sequence" not in message and "returned" not in message
    assert isinstance(info.value.__cause__, TypeError)


class Unprintable(ProbeHistory):
    def __repr__(self):
        raise RuntimeError("repr is broken too")

    def child(self, action):
        return Unprintable(self.game, self.path + (action,))


@pytest.mark.parametrize("method, depth, value", [
    ("utilities", 3, "12"),
    ("actions", 1, ("a", "a")),
    ("current_player", 2, 9),
])
def test_a_history_whose_repr_raises_still_gets_a_game_error(method, depth, value):
    game = Probe(method, depth, value)
    game.root = lambda: Unprintable(game, ())
    with pytest.raises(GameError) as info:
        compile_game(game)
    message = str(info.value)
    assert "<Unprintable object; its repr() raised RuntimeError>" in message
    assert f"{method}()" in message and "history [" in message


def test_a_history_whose_repr_raises_while_its_method_raises():
    game = Probe("infoset_key", 1, raise_=LookupError("no key"))
    game.root = lambda: Unprintable(game, ())
    with pytest.raises(GameError, match=r"infoset_key\(\) raised LookupError: no key"):
        compile_game(game)


def test_a_game_whose_repr_raises_still_gets_a_game_error():
    class Nameless(Probe):
        def __repr__(self):
            raise ValueError("no name")

    with pytest.raises(GameError, match=r"<Nameless object; its repr\(\) raised ValueError>"):
        compile_game(Nameless("utilities", 3, "12"))


def test_num_players_that_raises_is_reported():
    class Broken(Probe):
        @property
        def num_players(self):
            raise AttributeError("forgot to set it")

    with pytest.raises(GameError, match="reading num_players raised AttributeError") as info:
        compile_game(Broken())
    assert isinstance(info.value.__cause__, AttributeError)


def test_exception_text_is_trimmed():
    with pytest.raises(GameError) as info:
        compile_game(Probe("actions", 1, raise_=ValueError("x" * 1_000_000)))
    assert len(str(info.value)) < 400
    assert len(str(info.value.__cause__)) == 1_000_000  # the original stays whole


def test_keyboard_interrupt_is_not_swallowed():
    with pytest.raises(KeyboardInterrupt):
        compile_game(Probe("actions", 1, raise_=KeyboardInterrupt()))


def test_utilities_too_large_for_a_float_are_refused():
    for value in (10**400, -(10**309), 2**1024):
        with pytest.raises(GameError, match=r"utilities\(\) gave .*too large for a float64"):
            compile_game(Probe("utilities", 3, (value, 0)))


def test_user_numbers_whose_float_conversion_raises():
    class Weird(float):
        def __float__(self):
            raise ArithmeticError("no float for you")

    with pytest.raises(GameError, match=r"float\(\) of it raised ArithmeticError") as info:
        compile_game(Probe("utilities", 3, (Weird(1.0), -1.0)))
    assert isinstance(info.value.__cause__, ArithmeticError)


def test_labels_whose_hash_raises_are_reported():
    class Unhashable:
        def __hash__(self):
            raise RuntimeError("hash exploded")

        def __repr__(self):
            return "Unhashable()"

    with pytest.raises(GameError, match=r"actions\(\) gave the unhashable label an Unhashable"):
        compile_game(Probe("actions", 1, (Unhashable(), "b")))


def test_the_game_keeps_working_after_a_failed_compile():
    game = Probe("utilities", 3, "12")
    with pytest.raises(GameError):
        compile_game(game)
    game.method = None  # fixed: the failed walk cached nothing
    assert compile_game(game).num_nodes == 15
    assert cfrkit.VanillaCFR(game).iterate(10).iteration == 10
