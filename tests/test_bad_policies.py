"""Policies that are not policies: the Policy constructor's checks, its private table, and
policies of another game given to the evaluation functions or to a trainer's ``fixed=``."""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numpy.lib.stride_tricks import as_strided

import cfrkit
from cfrkit import Policy, compile_game
from cfrkit.games import KuhnPoker, RockPaperScissors

from conftest import LEDUC, RULES, TRAVERSALS
from random_games import RandomGame, random_policy
from spec_game import C, D, SpecGame, T

GAMES = {
    "rps": RockPaperScissors(),
    "kuhn2": KuhnPoker(),
    "kuhn3": KuhnPoker(players=3),
    "random": RandomGame(seed=21, num_players=3, max_depth=6, max_nodes=200),
}

TOLERANCE = 1e-9  # the row-sum tolerance the constructor documents


def rows(compiled):
    """``(key, first slot, number of actions)`` of every infoset."""
    tree = compiled.tree
    return [
        (key, int(tree.infoset_first_slot[i]), int(tree.infoset_num_actions[i]))
        for i, key in enumerate(compiled.infoset_keys)
    ]


def rejection(game, table, **kwargs) -> str:
    """The message of the ValueError ``Policy(game, table)`` must raise."""
    with pytest.raises(ValueError) as info:
        Policy(game, table, **kwargs)
    message = str(info.value)
    assert len(message) < 300, message
    return message


# -- the constructor's checks -------------------------------------------------------------------

BAD_ENTRIES = {
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "negative": -1e-3,
    "tiny negative": -5e-324,
}


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(GAMES)),
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(sorted(BAD_ENTRIES)),
    where=st.floats(0, 1, exclude_max=True),
)
def test_a_bad_entry_is_named_by_key_action_and_value(name, seed, kind, where):
    compiled = compile_game(GAMES[name])
    table = random_policy(compiled, seed).table.copy()
    slot = int(where * table.size)
    table[slot] = BAD_ENTRIES[kind]
    infoset = int(compiled.tree.slot_infoset[slot])
    action = compiled.infoset_actions[infoset][slot - compiled.tree.infoset_first_slot[infoset]]
    message = rejection(compiled, table)
    assert f"row {compiled.infoset_keys[infoset]!r}, action {action!r}" in message
    assert f"probability {BAD_ENTRIES[kind]!r}" in message
    # rescaling does not make it a probability either
    assert rejection(compiled, table, normalise=True) == message


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(GAMES)),
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(["fives", "plus 1e-6", "minus 1e-6", "zeros", "doubled", "huge"]),
    where=st.floats(0, 1, exclude_max=True),
)
def test_a_row_off_its_sum_is_named_by_key_and_sum(name, seed, kind, where):
    compiled = compile_game(GAMES[name])
    table = random_policy(compiled, seed).table.copy()
    key, start, count = rows(compiled)[int(where * compiled.num_infosets)]
    row = table[start : start + count]
    if kind == "fives":
        row[:] = 5.0
    elif kind == "plus 1e-6":
        row[0] += 1e-6
    elif kind == "minus 1e-6":
        row[np.argmax(row)] -= 1e-6  # the largest entry, so it stays non-negative
    elif kind == "zeros":
        row[:] = 0.0
    elif kind == "doubled":
        row *= 2.0
    else:
        row[:] = 1e308  # finite entries whose sum overflows
    try:
        total = math.fsum(row)
    except OverflowError:
        total = math.inf
    message = rejection(compiled, table)
    assert message == (
        f"Policy: row {key!r} sums to {total!r}, not 1 (tolerance 1e-09); "
        "pass normalise=True to rescale"
    )


def test_the_example_from_the_issue():
    game = KuhnPoker()
    table = np.full(compile_game(game).tree.num_action_slots, 5.0)
    message = rejection(game, table)
    assert message == (
        "Policy: row 'J' sums to 10.0, not 1 (tolerance 1e-09); pass normalise=True to rescale"
    )


@pytest.mark.parametrize("offset, accepted", [
    (1e-12, True), (-1e-12, True), (0.9e-9, True), (-0.9e-9, True),
    (1.1e-9, False), (-1.1e-9, False), (2e-9, False), (1e-6, False),
])
def test_the_tolerance_is_1e_9(offset, accepted):
    game = RockPaperScissors()
    table = np.array([0.5, 0.25, 0.25 + offset, 0.2, 0.3, 0.5])
    if accepted:
        assert Policy(game, table)["P0"]["scissors"] == 0.25 + offset
    else:
        assert "row 'P0' sums to" in rejection(game, table)


@settings(max_examples=200, deadline=None)
@given(
    weights=st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3).filter(lambda w: sum(w) > 0),
    offset=st.floats(-3e-9, 3e-9),
)
def test_the_constructor_and_from_dict_accept_the_same_rows(weights, offset):
    # near the boundary too: both decide on the exact (fsum) sum of the row
    game = RockPaperScissors()
    row = [w / math.fsum(weights) for w in weights]
    row[int(np.argmax(row))] += offset
    mapping = {"P0": row, "P1": [0.2, 0.3, 0.5]}
    try:
        Policy.from_dict(game, mapping)
        dict_accepts = True
    except ValueError:
        dict_accepts = False
    try:
        Policy(game, row + [0.2, 0.3, 0.5])
        table_accepts = True
    except ValueError:
        table_accepts = False
    assert table_accepts == dict_accepts == (abs(math.fsum(row) - 1.0) <= TOLERANCE)


def test_the_rule_is_on_the_exact_sum_at_the_boundary():
    # f is the largest float with f - 1 <= 1e-9; f + b + b rounds to f one addition at a time,
    # but the exact sum rounds to the float above f: outside the tolerance
    f = 1.0 + TOLERANCE
    while f - 1.0 > TOLERANCE:
        f = float(np.nextafter(f, 0.0))
    while float(np.nextafter(f, 2.0)) - 1.0 <= TOLERANCE:
        f = float(np.nextafter(f, 2.0))
    b = 0.375 * float(np.spacing(f))
    orders = ([f, b, b], [b, f, b], [b, b, f])
    assert math.fsum([f, b, b]) - 1.0 > TOLERANCE
    # numpy's vectorised sum misses it in some order (which one depends on its loops)
    assert any(np.add.reduceat(np.array(row + [1.0]), [0, 3])[0] == f for row in orders)
    game = RockPaperScissors()
    for row in orders:
        with pytest.raises(ValueError, match="sum to 1.000000001"):
            Policy.from_dict(game, {"P0": row, "P1": [0.2, 0.3, 0.5]})
        assert "row 'P0' sums to 1.000000001, not 1" in rejection(game, row + [0.2, 0.3, 0.5])
    assert Policy(game, [f, b, 0.0, 0.2, 0.3, 0.5])["P0"]["paper"] == b  # fsum is f: inside


def test_the_first_bad_row_is_named_and_the_message_stays_short():
    long_key, long_action = "k" * 1000, "a" * 500
    game = SpecGame(D(0, long_key, (long_action, T(1, -1)), ("b", T(-1, 1))))
    for table in ([math.nan, 1.0], [-1.0, 2.0], [0.4, 0.4]):
        message = rejection(game, table)
        assert "k" * 50 in message  # the key is still recognisable
    assert "a" * 25 in rejection(game, [math.nan, 1.0])
    # several bad rows: the message names the first one only
    table = np.full(compile_game(LEDUC).tree.num_action_slots, 7.0)
    assert f"row {compile_game(LEDUC).infoset_keys[0]!r} sums to" in rejection(LEDUC, table)


@pytest.mark.parametrize("table, shown", [
    (np.ones(5) / 5, "shape (6,), got (5,)"),
    (np.ones(7) / 7, "shape (6,), got (7,)"),
    (np.ones((2, 3)) / 3, "shape (6,), got (2, 3)"),
    (np.float64(1.0), "shape (6,), got ()"),
    ([], "shape (6,), got (0,)"),
    (["0.5", "0.25", "0.25", "0.2", "0.3", "0.5"], "real numbers"),
    ([0.5, 0.25, 0.25, 0.2, 0.3, None], "real numbers"),
    (np.array([1, 0, 0, 1, 0, 0], dtype=complex), "real numbers"),
    ([[1.0], [0.0, 0.0], 1.0, 0.0, 0.0], "array of numbers"),
])
def test_tables_that_are_not_arrays_of_probabilities(table, shown):
    assert shown in rejection(RockPaperScissors(), table)


def test_normalise_must_be_a_bool_given_by_keyword():
    game = RockPaperScissors()
    table = np.array([1, 1, 2, 1, 1, 1], dtype=float)
    for bad in (1, "yes", None):
        assert "normalise must be a bool" in rejection(game, table, normalise=bad)
        # from_dict too, also for a policy of the game, which it returns as it is
        for handed in ({"P0": [1, 1, 2], "P1": [1, 1, 1]}, Policy.uniform(game)):
            with pytest.raises(ValueError, match="normalise must be a bool"):
                Policy.from_dict(game, handed, normalise=bad)
    with pytest.raises(TypeError):
        Policy(game, table, True)  # noqa: FBT003 -- keyword-only on purpose


def test_non_negative_zero_and_integer_tables_are_fine():
    game = RockPaperScissors()
    assert dict(Policy(game, [-0.0, 1.0, -0.0, 0, 0, 1])["P0"]) == {
        "rock": 0.0, "paper": 1.0, "scissors": 0.0
    }
    assert Policy(game, np.array([1, 0, 0, 0, 1, 0], dtype=np.int8))["P1"]["paper"] == 1.0


# -- normalise=True -----------------------------------------------------------------------------


def test_normalise_divides_each_row_by_its_sum():
    game = RockPaperScissors()
    policy = Policy(game, [1.0, 2.0, 1.0, 0.0, 0.0, 3e-300], normalise=True)
    assert list(policy.table) == [0.25, 0.5, 0.25, 0.0, 0.0, 1.0]
    kuhn = compile_game(KuhnPoker())
    fives = Policy(kuhn, np.full(kuhn.tree.num_action_slots, 5.0), normalise=True)
    np.testing.assert_array_equal(fives.table, Policy.uniform(kuhn).table)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.floats(1e-200, 1e200))
def test_normalise_keeps_each_rows_proportions(seed, scale):
    compiled = compile_game(GAMES["random"])
    policy = random_policy(compiled, seed)
    rescaled = Policy(compiled, policy.table * scale, normalise=True)
    np.testing.assert_allclose(rescaled.table, policy.table, rtol=1e-14, atol=0)


@pytest.mark.parametrize("row, shown", [
    ([0.0, 0.0, 0.0], "row 'P1' sums to 0.0; cannot rescale it to 1"),
    ([1e308, 1e308, 0.0], "row 'P1' sums to inf; cannot rescale it to 1"),
    ([1.0, math.nan, 1.0], "row 'P1', action 'paper' has probability nan"),
    ([1.0, 2.0, -1.0], "row 'P1', action 'scissors' has probability -1.0"),
    ([math.inf, 1.0, 1.0], "row 'P1', action 'rock' has probability inf"),
])
def test_normalise_still_rejects_what_no_rescaling_fixes(row, shown):
    assert shown in rejection(RockPaperScissors(), [1.0, 1.0, 1.0] + row, normalise=True)


# -- the table cannot be written ----------------------------------------------------------------


def kuhn_policy() -> Policy:
    return random_policy(KuhnPoker(), 3)


def test_the_table_cannot_be_written_in_place():
    policy = kuhn_policy()
    before = policy.table.copy()
    writes = [
        lambda t: t.__setitem__(0, 1.0),
        lambda t: t.__setitem__(slice(None), 0.0),
        lambda t: t.__iadd__(1.0),
        lambda t: t.fill(0.0),
        lambda t: t.sort(),
        lambda t: np.copyto(t, 0.0),
        lambda t: np.add(t, 1.0, out=t),
        lambda t: t.resize(3, refcheck=False),
        lambda t: t.setflags(write=True),
        lambda t: setattr(t.flags, "writeable", True),
        lambda t: np.asarray(t).setflags(write=True),
        lambda t: t.view().setflags(write=True),
        lambda t: t[:].setflags(write=True),
        lambda t: t.reshape(-1, 1).setflags(write=True),
        lambda t: np.ndarray(t.shape, t.dtype, buffer=t).setflags(write=True),
        lambda t: np.frombuffer(t, dtype=np.float64).setflags(write=True),
        lambda t: as_strided(t, writeable=True).setflags(write=True),
        lambda t: memoryview(t).cast("B").__setitem__(0, 1),
    ]
    for write in writes:
        with pytest.raises((ValueError, TypeError)):
            write(policy.table)
    np.testing.assert_array_equal(policy.table, before)


def test_no_base_in_the_chain_is_writable():
    # numpy lets an array that owns its data be made writable again; none may be reachable
    policy = kuhn_policy()
    base = policy.table
    depth = 0
    while isinstance(base, np.ndarray):
        with pytest.raises(ValueError):
            base.setflags(write=True)
        assert not base.flags.writeable
        base, depth = base.base, depth + 1
    assert depth >= 1 and base is not None
    assert memoryview(base).readonly  # what holds the data is immutable
    assert not isinstance(base, (bytearray, np.ndarray))


def test_changing_a_handed_out_array_does_not_change_the_policy():
    policy = kuhn_policy()
    before, rows_before = policy.table.copy(), policy.to_dict()
    value = cfrkit.nash_conv(policy.game, policy)
    handed = policy.table
    assert handed is not policy.table  # a fresh array every time
    with warnings.catch_warnings():  # setting shape and dtype in place is deprecated, not gone
        warnings.simplefilter("ignore", DeprecationWarning)
        handed.shape = (2, -1)
        handed.dtype = np.int64
    state = np.full(before.size, 5.0).__reduce__()[2]
    handed.__setstate__(state)  # rebinds that array object to new, writable data
    handed[...] = 7.0
    np.testing.assert_array_equal(policy.table, before)
    assert policy.table.shape == before.shape and policy.table.dtype == np.float64
    assert policy.to_dict() == rows_before
    assert cfrkit.nash_conv(policy.game, policy) == value


def test_the_input_is_copied():
    game = RockPaperScissors()
    table = np.array([1.0, 0.0, 0.0, 0.2, 0.3, 0.5])
    policy = Policy(game, table)
    table[:] = 5.0
    assert policy.table[0] == 1.0 and policy["P1"]["scissors"] == 0.5


def test_the_policy_object_is_immutable():
    policy = kuhn_policy()
    other = Policy.uniform(KuhnPoker())
    for name, value in [("_table", other.table), ("_game", other.game), ("table", other.table),
                        ("game", other.game), ("extra", 1)]:
        with pytest.raises(AttributeError):
            setattr(policy, name, value)
    for name in ("_table", "_game"):
        with pytest.raises(AttributeError):
            delattr(policy, name)
    assert not hasattr(policy, "__dict__")


@pytest.mark.parametrize("clone", [
    lambda p: pickle.loads(pickle.dumps(p)),
    copy.copy,
    copy.deepcopy,
])
def test_copies_and_pickles_are_policies_with_protected_tables_too(clone):
    policy = kuhn_policy()
    twin = clone(policy)
    assert twin == policy
    np.testing.assert_array_equal(twin.table, policy.table)
    with pytest.raises(ValueError):
        twin.table.setflags(write=True)
    with pytest.raises((ValueError, AttributeError)):
        twin.table.base.setflags(write=True)
    assert cfrkit.nash_conv(policy.game, twin) == cfrkit.nash_conv(policy.game, policy)


def test_a_tampered_pickle_is_checked_when_loaded():
    game = RockPaperScissors()
    marker = 0.123456789
    policy = Policy(game, [marker, 0.5, 0.5 - marker, 0.2, 0.3, 0.5])
    data = pickle.dumps(policy)
    assert data.count(np.float64(marker).tobytes()) == 1
    tampered = data.replace(np.float64(marker).tobytes(), np.float64(5.0).tobytes())
    with pytest.raises(ValueError, match="row 'P0' sums to 5.87654321"):
        pickle.loads(tampered)


# -- a policy of another game -------------------------------------------------------------------

EVALUATIONS = {
    "expected_values": cfrkit.expected_values,
    "best_response": lambda game, policy: cfrkit.best_response(game, policy, 0),
    "nash_conv": cfrkit.nash_conv,
    "exploitability": cfrkit.exploitability,
    "evaluate": cfrkit.evaluate,
}


@pytest.mark.parametrize("name", sorted(EVALUATIONS))
def test_evaluation_rejects_a_policy_of_another_game(name):
    function = EVALUATIONS[name]
    three = Policy.uniform(KuhnPoker(players=3))
    with pytest.raises(ValueError) as info:
        function(KuhnPoker(), three)
    assert str(info.value) == (
        f"{name}: the policy belongs to KuhnPoker(players=3), not KuhnPoker(players=2)"
    )
    # Leduc policies against Kuhn, and Kuhn against a compiled Leduc
    with pytest.raises(ValueError, match=f"^{name}: the policy belongs to LeducPoker"):
        function(KuhnPoker(), Policy.uniform(LEDUC))
    with pytest.raises(ValueError, match=f"^{name}: the policy belongs to KuhnPoker"):
        function(compile_game(LEDUC), Policy.uniform(KuhnPoker()))


def payoff_variant(win: float, name: str = "spec") -> SpecGame:
    """Matching pennies with a coin flip first; the same keys and actions for every ``win``."""
    pennies = D(0, "me", ("h", D(1, "you", ("h", T(win, -win)), ("t", T(-1, 1)))),
                ("t", D(1, "you", ("h", T(-1, 1)), ("t", T(win, -win)))))
    return SpecGame(C(("x", 0.5, pennies), ("y", 0.5, pennies)), name=name)


@pytest.mark.parametrize("name", sorted(EVALUATIONS))
def test_matching_keys_do_not_make_a_policy_fit_another_game(name):
    # the old behaviour read a foreign Policy by key; it now is an error, named as one
    function = EVALUATIONS[name]
    game, other = payoff_variant(1.0, name="pennies"), payoff_variant(3.0, name="big pennies")
    policy = Policy.from_dict(other, {"me": [0.9, 0.1], "you": [0.4, 0.6]})
    assert list(policy) == list(compile_game(game).infoset_keys)
    with pytest.raises(ValueError) as info:
        function(game, policy)
    assert str(info.value) == (
        f"{name}: the policy belongs to SpecGame(name='big pennies'), "
        "not SpecGame(name='pennies')"
    )
    # the same repr: the message still says what is wrong
    with pytest.raises(ValueError, match=f"^{name}: the policy belongs to another game with"):
        function(payoff_variant(1.0), Policy.uniform(payoff_variant(3.0)))
    # matching by key stays available, explicitly
    function(game, policy.to_dict())


@pytest.mark.parametrize("name", sorted(EVALUATIONS))
def test_evaluation_accepts_a_policy_of_an_equal_game_compiled_separately(name):
    function = EVALUATIONS[name]
    mine, theirs = compile_game(KuhnPoker()), compile_game(KuhnPoker())
    assert mine is not theirs and mine.fingerprint == theirs.fingerprint
    table = random_policy(mine, 5).table
    expected = function(mine, Policy(mine, table))
    got = function(mine, Policy(theirs, table))
    if isinstance(expected, cfrkit.Evaluation):
        assert str(got) == str(expected)
        np.testing.assert_array_equal(got.values, expected.values)
    else:
        assert got == expected if not isinstance(got, np.ndarray) else np.array_equal(got, expected)
    # a policy that went through pickle carries its own copy of the game
    again = pickle.loads(pickle.dumps(Policy(mine, table)))
    assert again.game is not mine
    assert str(function(mine, again)) == str(expected)


def test_the_same_compiled_game_needs_no_fingerprint():
    game = compile_game(KuhnPoker())
    cfrkit.evaluate(game, Policy.uniform(game))
    assert "fingerprint" not in game._cache  # the identity check came first


# -- fixed= ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("traversal", sorted(TRAVERSALS))
def test_fixed_rejects_a_policy_of_another_game(traversal):
    make = TRAVERSALS[traversal].make
    with pytest.raises(ValueError) as info:
        make(KuhnPoker(), RULES["vanilla"], fixed=Policy.uniform(KuhnPoker(players=3)))
    assert str(info.value) == (
        "fixed: the policy belongs to KuhnPoker(players=3), not KuhnPoker(players=2)"
    )
    game, other = payoff_variant(1.0, name="pennies"), payoff_variant(3.0, name="big pennies")
    with pytest.raises(ValueError, match="^fixed: the policy belongs to SpecGame"):
        make(game, RULES["vanilla"], fixed=Policy.uniform(other))
    # by key, as a mapping, it is still fine
    locked = make(game, RULES["vanilla"], fixed=Policy.uniform(other).to_dict()).iterate(2)
    assert dict(locked.average_policy()["me"]) == {"h": 0.5, "t": 0.5}


def test_fixed_accepts_a_policy_of_an_equal_game_compiled_separately():
    mine, theirs = compile_game(KuhnPoker()), compile_game(KuhnPoker())
    locked = random_policy(theirs, 9)
    trainer = cfrkit.VanillaCFR(mine, fixed=locked).iterate(3)
    np.testing.assert_array_equal(trainer.average_policy().table, locked.table)


# -- every valid policy cfrkit makes passes -------------------------------------------------------


def check_valid(policy: Policy) -> None:
    """``policy`` rebuilt from its table passes, and its rows are probabilities."""
    again = Policy(policy.game, policy.table)
    np.testing.assert_array_equal(again.table, policy.table)
    sums = np.add.reduceat(policy.table, policy.game.tree.infoset_first_slot)
    assert np.all(np.abs(sums - 1.0) <= TOLERANCE) and np.all(policy.table >= 0.0)


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("traversal", sorted(TRAVERSALS))
def test_every_trainer_makes_valid_policies(traversal, rule):
    trainer = TRAVERSALS[traversal].make(LEDUC, RULES[rule])
    check_valid(trainer.average_policy())  # before any iteration: all weights zero
    for _ in range(3):
        trainer.iterate(2)
        check_valid(trainer.current_policy())
        check_valid(trainer.average_policy())


def test_pruned_trainers_make_valid_policies():
    trainer = cfrkit.PrunedCFR(LEDUC, rule=RULES["vanilla"], regret_pruning=True).iterate(20)
    check_valid(trainer.current_policy())
    check_valid(trainer.average_policy())


@pytest.mark.parametrize("traversal", sorted(TRAVERSALS))
def test_rows_that_are_never_reached_are_uniform_and_valid(traversal):
    # player 0 always bets with the jack, so its jack-after-pass-bet infoset is never reached
    game = compile_game(KuhnPoker())
    trainer = TRAVERSALS[traversal].make(game, RULES["cfr_plus"], fixed={"J": {"bet": 1.0}})
    trainer.iterate(5)
    average = trainer.average_policy()
    check_valid(average)
    assert dict(average["Jpb"]) == {"pass": 0.5, "bet": 0.5}
    check_valid(trainer.current_policy())


def test_other_constructors_make_valid_policies(tmp_path):
    for game in (*GAMES.values(), LEDUC):
        compiled = compile_game(game)
        uniform = Policy.uniform(compiled)
        check_valid(uniform)
        policy = random_policy(compiled, 1)
        check_valid(policy)
        for player in range(compiled.num_players):
            check_valid(cfrkit.best_response(compiled, policy, player).as_policy())
        check_valid(cfrkit.load_policy(policy.save(tmp_path / "policy.json"), compiled))
        check_valid(Policy.from_dict(compiled, policy.to_dict()))


def test_policies_read_from_openspiel_are_valid():
    pyspiel = pytest.importorskip("pyspiel")
    from cfrkit.openspiel import from_openspiel, from_openspiel_policy, to_tabular_policy

    game = from_openspiel("leduc_poker")
    solver = pyspiel.CFRSolver(game.openspiel_game)
    for _ in range(3):
        solver.evaluate_and_update_policy()
    check_valid(from_openspiel_policy(game, solver.tabular_average_policy()))
    check_valid(from_openspiel_policy(game, solver.tabular_current_policy()))
    ours = random_policy(game, 4)
    check_valid(from_openspiel_policy(game, to_tabular_policy(game, ours)))
