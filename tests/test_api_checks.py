"""The public API's answers to odd but plausible calls: numpy integers where ints are asked
for, arguments checked even where no work follows, short reprs, copies refused with a hint,
and type hints that resolve."""

from __future__ import annotations

import copy
import pickle
import typing

import numpy as np
import pytest

import cfrkit
from cfrkit import CompiledGame, compile_game, load_compiled
from cfrkit.games import KuhnPoker, LeducPoker, MatrixGame, RockPaperScissors


# -- numpy integers ---------------------------------------------------------------------------


def test_numpy_integers_are_integers():
    game = KuhnPoker(np.int64(3), max_bets=np.int32(1))
    assert type(game.num_players) is int and type(game.max_bets) is int  # never np.int64
    assert game.identity == KuhnPoker(3).identity
    compiled = compile_game(KuhnPoker(), max_nodes=np.int64(1000), max_memory=np.uint32(10**9))
    assert compiled.num_nodes == 55
    with pytest.raises(ValueError, match="max_nodes must be a positive integer, got 10.0"):
        compile_game(KuhnPoker(), max_nodes=10.0)
    with pytest.raises(ValueError, match=r"players must be an int >= 2, got np.True_"):
        KuhnPoker(np.True_)


# -- arguments checked even where no walk follows ---------------------------------------------


@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(max_nodes=-5), "max_nodes must be a positive integer"),
        (dict(max_memory=0), "max_memory must be a positive number of bytes"),
        (dict(progress="x"), "progress must be a bool or None"),
        (dict(cache_dir=3), "cache_dir must be a path or None"),
        # an empty string (an unset variable) would be the current directory, silently
        (dict(cache_dir=""), r"^cache_dir must name a directory, got '' \(pass '\.' for the "),
    ],
)
def test_compile_game_checks_its_arguments_for_a_compiled_or_cached_game(arguments, message):
    game = KuhnPoker()
    compiled = compile_game(game)
    for given in (game, compiled):  # cached on the game; a CompiledGame as it is
        with pytest.raises(ValueError, match=message):
            compile_game(given, **arguments)


def test_limits_bound_a_walk_not_a_compiled_game():
    """A tree in hand is returned whatever its size: the limits bound walking (the trainers
    call compile_game with the defaults, which must not refuse a game compiled with more)."""
    game = KuhnPoker()
    compiled = compile_game(game)
    assert compile_game(game, max_nodes=10) is compiled
    assert compile_game(compiled, max_nodes=10) is compiled
    with pytest.raises(cfrkit.GameError, match="more than max_nodes=10 nodes"):
        compile_game(KuhnPoker(), max_nodes=10)


def test_load_trainer_refuses_a_rule_that_is_not_one(tmp_path):
    path = cfrkit.CFRPlus(KuhnPoker()).iterate(2).save(tmp_path / "t.npz")
    with pytest.raises(TypeError, match="^rule must be a cfrkit.RegretRule, got str$"):
        cfrkit.load_trainer(path, KuhnPoker(), rule="x")


def test_matrix_game_names_a_bad_argument():
    with pytest.raises(TypeError, match="m: actions must be a sequence of labels, got int"):
        MatrixGame("m", 3, [[0.0]])
    with pytest.raises(TypeError, match="actions must be a sequence of labels, got str"):
        MatrixGame("m", "rps", np.zeros((3, 3)))  # not the three labels 'r', 'p', 's'
    with pytest.raises(TypeError, match="name must be a str, got NoneType"):
        MatrixGame(None, ("a", "b"), np.zeros((2, 2)))


# -- saving returns the path ------------------------------------------------------------------


def test_every_save_returns_the_path_it_wrote(tmp_path):
    trainer = cfrkit.CFRPlus(KuhnPoker()).iterate(3)
    learner = cfrkit.ResultTableLearner(KuhnPoker(), seed=0).iterate(3)
    for obj, name in [(trainer, "t.npz"), (learner, "l.npz"), (trainer.average_policy(), "p.json"),
                      (trainer.game, "g.npz")]:
        written = obj.save(str(tmp_path / name))
        assert written == tmp_path / name and written.is_file()


# -- reprs ------------------------------------------------------------------------------------


def test_reprs_stay_short_on_a_big_game():
    compiled = compile_game(LeducPoker())  # 936 infosets
    for text in (repr(compiled.infosets), repr(compiled.key_index), repr(compiled.tree)):
        assert len(text) < 400, text[:400]
    assert "(933 more)" in repr(compiled.infosets)
    tree = compiled.tree
    assert repr(tree) == (
        f"GameTree(num_players=2, num_action_slots={int(tree.infoset_num_actions.sum())}, "
        f"nodes=9457, infosets=936, chance_slots={tree.chance_prob.shape[0]})"
    )
    first = next(iter(compiled.key_index))
    assert repr(compiled.key_index).startswith(f"{{{first!r}: 0, ")


# -- copies -----------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: cfrkit.CFRPlus(KuhnPoker()).iterate(2),
    lambda: cfrkit.ResultTableLearner(KuhnPoker(), seed=0),
    lambda: cfrkit.FictitiousPlay(KuhnPoker()),
])
@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy, pickle.dumps])
def test_trainers_refuse_copies_and_pickles_with_a_hint(make, how):
    """A shallow copy would share the arrays: iterating it would move the original's arrays
    and not its counters. So every copy is refused, saying what to do instead."""
    trainer = make()
    with pytest.raises(TypeError, match=f"a {type(trainer).__name__} cannot be copied or pickled"
                       ) as info:
        how(trainer)
    if hasattr(trainer, "save"):
        assert "cfrkit.load_trainer()" in str(info.value)


@pytest.mark.parametrize("make", [
    lambda: cfrkit.CFRPlus(KuhnPoker()),
    lambda: cfrkit.ExternalSamplingCFR(KuhnPoker(), seed=0),
    lambda: cfrkit.ResultTableLearner(KuhnPoker(), seed=0),
    lambda: cfrkit.FictitiousPlay(KuhnPoker()),
])
def test_a_learners_game_cannot_be_replaced(make):
    """Its arrays are laid out for its game: the kernels would index them with another game's
    tree, unchecked. The game stays the one it was built for."""
    learner = make()
    game = learner.game
    with pytest.raises(AttributeError):
        learner.game = compile_game(LeducPoker())
    assert learner.game is game and learner.game.game.__class__ is KuhnPoker
    learner.iterate(1)


def _built_in_games():
    games = [KuhnPoker(players=3), LeducPoker(), RockPaperScissors(),
             MatrixGame("m", ("a", "b"), [[1.0, 0.0], [0.0, 1.0]])]
    try:
        from cfrkit.openspiel import from_openspiel
        games.append(from_openspiel("kuhn_poker"))
    except ImportError:
        pass
    return games


@pytest.mark.parametrize("game", _built_in_games(), ids=lambda g: type(g).__name__)
def test_a_built_in_games_rules_cannot_change(game, tmp_path):
    """compile_game keeps the tree on the object and files it under the identity the
    attributes make: a changed attribute would meet the old tree."""
    compiled = compile_game(game)
    name = type(game).__name__
    for attribute in ("num_players", "name"):
        with pytest.raises(AttributeError, match=rf"{name}\.{attribute} cannot be changed: "
                           rf"a game is compiled once per object; make a new {name}\(\.\.\.\)"):
            setattr(game, attribute, 3)
        with pytest.raises(AttributeError, match="cannot be changed"):
            delattr(game, attribute)
    game.note = "a new attribute of one's own is fine"
    assert compile_game(game) is compiled and game.num_players == compiled.num_players
    # the game of a loaded file too
    stored = load_compiled(compiled.save(tmp_path / "g.npz")).game
    with pytest.raises(AttributeError, match="StoredGame.path cannot be changed"):
        stored.path = "elsewhere.npz"


def test_a_matrix_games_payoffs_are_its_own_and_read_only():
    payoff = np.eye(2)
    game = MatrixGame("m", ("a", "b"), payoff)
    payoff[0, 0] = 5.0  # the caller's array
    assert game.row_payoff[0, 0] == 1.0
    for matrix in (game.row_payoff, game.column_payoff):
        with pytest.raises(ValueError, match="read-only"):
            matrix[0, 1] = 2.0
        with pytest.raises(ValueError, match="cannot set WRITEABLE flag"):
            matrix.setflags(write=True)
    with pytest.raises(AttributeError, match="KuhnPoker.max_bets cannot be changed"):
        KuhnPoker().max_bets = 2


def test_a_subclass_of_a_built_in_game_sets_what_it_likes_while_it_is_made():
    class Named(KuhnPoker):
        def __init__(self):
            super().__init__(players=3)
            self.name = "three-player kuhn"

    game = Named()
    assert game.name == "three-player kuhn" and compile_game(game).num_players == 3
    with pytest.raises(AttributeError, match="Named.name cannot be changed"):
        game.name = "another"
    with pytest.raises(AttributeError, match="Named.deal cannot be changed"):
        copy.deepcopy(game).deal = "independent"  # copies are made too


def test_results_hold_read_only_arrays():
    # a record or an evaluation says what was measured: nobody edits it afterwards by accident
    game = KuhnPoker()
    record = cfrkit.CFRPlus(game).solve(max_iterations=20)
    evaluation = cfrkit.evaluate(game, cfrkit.Policy.uniform(game))
    arrays = [getattr(record, name) for name in
              ("iterations", "seconds", "training_seconds", "nash_conv", "exploitability")]
    arrays += [evaluation.values, evaluation.player_improvements, evaluation.best_response_values]
    for array in arrays:
        with pytest.raises(ValueError, match="read-only"):
            array[-1] = 0
        with pytest.raises(ValueError, match="cannot set WRITEABLE flag"):
            array.setflags(write=True)
    assert record.iterations.dtype == np.int64 and record.nash_conv.dtype == np.float64
    # built by hand from the caller's arrays: copies, the caller's stay writable
    mine = np.array([0.5, 0.25])
    copy_ = cfrkit.SolveRecord("X", "g", np.array([1, 2]), mine, mine, mine, None, "target", 0.0)
    mine[0] = 9.0
    assert copy_.seconds[0] == 0.5 and copy_.exploitability is None


def test_game_classes_show_their_own_signature():
    # the metaclass that fixes attributes has a __call__(*args, **kwargs) of its own
    import inspect

    assert str(inspect.signature(KuhnPoker)) == (
        "(players: 'int' = 2, *, max_bets: 'int' = 1, deal: 'str' = 'deck')"
    )
    assert str(inspect.signature(LeducPoker)) == "()"

    class Dice(cfrkit.FixedAttributes, cfrkit.Game):
        num_players = 2

        def __init__(self, sides: int, *, seed=None) -> None:
            self.sides = sides

        def root(self): ...

    assert str(inspect.signature(Dice)) == "(sides: 'int', *, seed=None)"


# -- errors that name what is wrong -----------------------------------------------------------


def test_a_damaged_compiled_game_is_a_public_error(tmp_path):
    path = tmp_path / "bad.npz"
    path.write_bytes(b"not a zip file")
    with pytest.raises(cfrkit.CompiledFileError, match="bad.npz") as info:
        cfrkit.load_compiled(path)
    assert isinstance(info.value, ValueError)
    assert type(info.value).__module__ + "." + type(info.value).__name__ == (
        "cfrkit.tree.store.CompiledFileError"
    )


def test_plot_convergence_names_records():
    pytest.importorskip("matplotlib")
    from cfrkit import plot

    with pytest.raises(TypeError, match="records must be a SolveRecord or a sequence of them, "
                                        "got NoneType"):
        plot.convergence(None)


# -- type hints -------------------------------------------------------------------------------


def test_public_type_hints_resolve():
    """typing.get_type_hints works on every public function and method of the core API (the
    hints name what is importable at run time)."""
    objects = [getattr(cfrkit, name) for name in cfrkit.__all__ if name not in {"sweep", "load_sweep"}]
    checked = 0
    for obj in objects:
        members = [obj] if not isinstance(obj, type) else [
            member for name, member in vars(obj).items()
            if callable(member) and not name.startswith("_") or name == "__init__"
        ]
        for member in members:
            if callable(member) and getattr(member, "__annotations__", None):
                typing.get_type_hints(member)  # raises NameError for a hint it cannot resolve
                checked += 1
    assert checked > 40
    assert typing.get_type_hints(CompiledGame.save)["return"].__name__ == "Path"
