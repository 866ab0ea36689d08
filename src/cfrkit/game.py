"""The game interface: what a user implements to describe an extensive-form game.

A game is a tree of immutable :class:`History` objects rooted at :meth:`Game.root`. Each history
is exactly one of

* terminal -- :meth:`History.utilities` gives one payoff per player;
* chance -- :meth:`History.chance_outcomes` gives ``(action, probability)`` pairs;
* decision -- :meth:`History.current_player` acts, choosing among :meth:`History.actions`,
  and :meth:`History.infoset_key` names what that player knows (histories the player cannot
  tell apart share a key).

Python walks this tree exactly once, when :func:`cfrkit.compile_game` flattens it into arrays;
the solvers never call back into these objects.
"""

from __future__ import annotations

import abc
import copyreg
from dataclasses import dataclass
from typing import Hashable

__all__ = ["FixedAttributes", "Game", "GameError", "History", "InfoSet"]

# the attribute of a game object where cfrkit.compile_game keeps its compiled tree
COMPILED_ATTRIBUTE = "_cfrkit_compiled"


class GameError(ValueError):
    """A game breaks the rules of a finite extensive-form game with perfect recall.

    Raised by :func:`cfrkit.compile_game` (and so by every trainer and evaluation function),
    with the offending history named in the message.
    """


class History(abc.ABC):
    """One node of the game tree: the sequence of actions (chance included) taken so far.

    Histories are immutable: :meth:`child` returns a new history and never changes ``self``.
    Only the methods that match the node's kind are called: ``utilities`` at terminal nodes,
    ``chance_outcomes`` at chance nodes, ``current_player``/``actions``/``infoset_key`` at
    decision nodes.
    """

    @abc.abstractmethod
    def is_terminal(self) -> bool:
        """Whether the game is over at this history."""

    @abc.abstractmethod
    def is_chance(self) -> bool:
        """Whether chance (nature) acts at this history."""

    @abc.abstractmethod
    def current_player(self) -> int:
        """The 0-based index of the player to act (decision nodes only)."""

    @abc.abstractmethod
    def actions(self) -> tuple[Hashable, ...]:
        """The legal actions of the player to act, as hashable labels (decision nodes only)."""

    @abc.abstractmethod
    def chance_outcomes(self) -> tuple[tuple[Hashable, float], ...]:
        """``(action, probability)`` pairs at a chance node; probabilities sum to 1."""

    @abc.abstractmethod
    def child(self, action: Hashable) -> History:
        """The history after ``action`` (a player's action or a chance outcome).

        Parameters
        ----------
        action : Hashable
            One of :meth:`actions` (at a decision) or of the outcomes of
            :meth:`chance_outcomes` (at a chance node). The history itself must not change:
            the compiler walks its other children after this one.
        """

    @abc.abstractmethod
    def infoset_key(self) -> str:
        """The acting player's information set: equal for histories that player cannot tell apart.

        Keys are global across players: one key must always belong to the same player and the
        same actions.
        """

    @abc.abstractmethod
    def utilities(self) -> tuple[float, ...]:
        """One finite payoff per player (terminal nodes only)."""


class Game(abc.ABC):
    """A finite extensive-form game with perfect recall.

    Subclasses set ``num_players`` and ``name`` and implement :meth:`root`. A game object is
    treated as immutable: its compiled tree is cached per object (see
    :func:`cfrkit.compile_game`). Defining :attr:`identity` lets the compiled tree be kept on
    disk between processes too (``compile_game(game, cache_dir=...)``).
    """

    num_players: int
    name: str

    @abc.abstractmethod
    def root(self) -> History:
        """The empty history where the game starts."""

    @property
    def identity(self) -> str | None:
        """A string that names this game exactly, or ``None`` (the default): no disk cache.

        ``compile_game(game, cache_dir=...)`` files the compiled tree under a hash of this
        string (with the game's class, the cfrkit version and the source files of cfrkit's
        compiler and of the game's class), and a later process whose game has the same identity
        loads that file instead of walking the game. So it must name the game and every
        parameter, data file or library version its rules depend on, and change whenever they
        do: two games with equal identities must have equal trees. The built-in games return
        their class and every constructor argument, e.g.
        ``"cfrkit.games.kuhn.KuhnPoker(players=3, max_bets=1, deal='deck')"``; OpenSpiel games
        loaded by name ``"openspiel:leduc_poker(players=3)"``, their data files' digests and the
        OpenSpiel version.

        Examples
        --------
        >>> from cfrkit import Game
        >>> class Dice(Game):
        ...     num_players = 2
        ...     def __init__(self, sides: int) -> None:
        ...         self.sides = sides
        ...         self.name = f"dice_{sides}"
        ...     @property
        ...     def identity(self) -> str:
        ...         return f"mylab.Dice(sides={self.sides}) rules v2"
        ...     def root(self):
        ...         ...
        >>> Dice(6).identity
        'mylab.Dice(sides=6) rules v2'
        """
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={getattr(self, 'name', '?')!r})"

    def __getstate__(self) -> object:
        """What a pickle or copy of the game holds: all but its compiled tree, which
        :func:`cfrkit.compile_game` keeps on the object (a copy may be changed, and compiles
        its own; a pickle stays the size of the game's own attributes)."""
        default = getattr(super(), "__getstate__", None)  # object's, from Python 3.11
        if default is not None:
            state = default()
        else:  # Python 3.10: the state object's pickling would take
            slots = {name: getattr(self, name) for name in copyreg._slotnames(type(self))
                     if hasattr(self, name)}
            state = (self.__dict__, slots) if slots else self.__dict__
        if isinstance(state, tuple):
            return (_without_compiled(state[0]), *state[1:])
        return _without_compiled(state)


class _FixedOnceMade(abc.ABCMeta):
    """Marks each object as made once its whole ``__init__`` (a subclass's too) has run."""

    def __call__(cls, *args, **kwargs):
        game = super().__call__(*args, **kwargs)
        object.__setattr__(game, "_cfrkit_made", True)
        return game

    @property
    def __signature__(cls):
        # inspect would read the ``__call__`` above, (*args, **kwargs): show ``__init__``'s
        import inspect

        if cls.__init__ is object.__init__:
            return inspect.Signature()
        signature = inspect.signature(cls.__init__)
        return signature.replace(parameters=list(signature.parameters.values())[1:],
                                 return_annotation=inspect.Signature.empty)


class FixedAttributes(metaclass=_FixedOnceMade):
    """A mixin for games whose attributes are their rules: once the game is made, its public
    attributes cannot be set again or deleted (``AttributeError``); new ones may be added.

    :func:`cfrkit.compile_game` keeps a game's compiled tree on the game object, and with
    ``cache_dir`` files it under the game's :attr:`~Game.identity`, which the attributes make:
    a game changed after it was compiled would get the old tree back. cfrkit's own games use
    it; list it before :class:`Game` to have yours refuse changes too. ``__init__`` (a
    subclass's too) sets what it likes; private attributes (``_name``) stay free for the
    game's own bookkeeping. Copies and pickles of a game stay fixed.

    Examples
    --------
    >>> import cfrkit
    >>> class Dice(cfrkit.FixedAttributes, cfrkit.Game):
    ...     num_players = 2
    ...     def __init__(self, sides: int) -> None:
    ...         self.sides = sides
    ...         self.name = f"dice_{sides}"
    ...     def root(self):
    ...         ...
    >>> game = Dice(6)
    >>> game.sides = 8
    Traceback (most recent call last):
    ...
    AttributeError: Dice.sides cannot be changed: a game is compiled once per object; make a new Dice(...) for other rules
    """

    def __setattr__(self, name: str, value: object) -> None:
        if not name.startswith("_") and self.__dict__.get("_cfrkit_made") and hasattr(self, name):
            raise AttributeError(self._fixed(name))
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if not name.startswith("_") and self.__dict__.get("_cfrkit_made"):
            raise AttributeError(self._fixed(name))
        object.__delattr__(self, name)

    def _fixed(self, name: str) -> str:
        kind = type(self).__name__
        return (f"{kind}.{name} cannot be changed: a game is compiled once per object; make "
                f"a new {kind}(...) for other rules")


def _without_compiled(state: object) -> object:
    if isinstance(state, dict) and COMPILED_ATTRIBUTE in state:
        state = {key: value for key, value in state.items() if key != COMPILED_ATTRIBUTE}
    return state


@dataclass(frozen=True)
class InfoSet:
    """A read-only record of one information set of the compiled game.

    Attributes
    ----------
    key : str
        The key returned by :meth:`History.infoset_key` for the histories in this set.
    player : int
        The 0-based index of the player who acts here.
    actions : tuple
        The legal actions, in the order the game listed them.
    """

    key: str
    player: int
    actions: tuple[Hashable, ...]
