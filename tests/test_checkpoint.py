"""Checkpoints: continuing a loaded trainer is bit-identical; bad files give CheckpointError."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import zipfile

import numpy as np
import pytest

import cfrkit
from cfrkit import CheckpointError, RegretRule, compile_game
from cfrkit.games import KuhnPoker, LeducPoker
from cfrkit.tree.walk import TERMINAL

from conftest import GAMES, RULES, TRAVERSALS, HalvingRule

NAMED = {
    "vanilla": lambda g: cfrkit.VanillaCFR(g),
    "vanilla_simultaneous": lambda g: cfrkit.VanillaCFR(g, alternating=False),
    "cfr_plus": lambda g: cfrkit.CFRPlus(g),
    "linear": lambda g: cfrkit.LinearCFR(g),
    "discounted": lambda g: cfrkit.DiscountedCFR(g, alpha=2.0, beta=0.5, gamma=3.0),
    "predictive_plus": lambda g: cfrkit.PredictiveCFRPlus(g),
    "dcfr_plus": lambda g: cfrkit.DCFRPlus(g, alpha=1.2),
    "pdcfr_plus": lambda g: cfrkit.PDCFRPlus(g),
    "regret_pruning": lambda g: cfrkit.PrunedCFR(g),  # windows, snapshots, pending marks
    "threshold": lambda g: cfrkit.PrunedCFR(g, threshold=0.02, regret_pruning=False),
    "sampled_joint": lambda g: cfrkit.ChanceSampledCFR(g, seed=4, alternating=False),
    "locked": lambda g: cfrkit.CFRPlus(g, fixed={"K": {"bet": 1.0}, "Qb": [0.5, 0.5]}),
}


def assert_same_run(a, b) -> None:
    assert type(a) is type(b) and a.iteration == b.iteration
    assert a.nodes_touched == b.nodes_touched
    for name, x, y in zip(a._state._fields, a._state, b._state):
        np.testing.assert_array_equal(x, y, err_msg=name)
    np.testing.assert_array_equal(a.average_policy().table, b.average_policy().table)
    assert a.cumulative_regrets() == b.cumulative_regrets()


def stop_and_continue(make, game, tmp_path, before: int, after: int):
    """A run of before + after iterations, and the same run saved and loaded in between."""
    straight = make(game).iterate(before + after)
    first = make(game).iterate(before)
    first.save(tmp_path / "run.npz")
    resumed = cfrkit.load_trainer(tmp_path / "run.npz", game)
    assert resumed.iteration == before
    return straight, resumed.iterate(after)


@pytest.mark.parametrize("rule_name", sorted(RULES))
@pytest.mark.parametrize("traversal", sorted(TRAVERSALS))
def test_every_traversal_and_rule_continues_bit_for_bit(traversal, rule_name, tmp_path):
    rule = RULES[rule_name]
    make = lambda g: TRAVERSALS[traversal].make(g, rule)  # noqa: E731
    load_rule = rule if type(rule) is not RegretRule else None
    straight = make(GAMES["kuhn3"]).iterate(250)
    first = make(GAMES["kuhn3"]).iterate(97)
    first.save(tmp_path / "run.npz")
    resumed = cfrkit.load_trainer(tmp_path / "run.npz", GAMES["kuhn3"], rule=load_rule)
    assert_same_run(first, resumed)  # every array as saved, read or not by the next pass
    assert_same_run(straight, resumed.iterate(153))


def test_threshold_pruning_continues_bit_for_bit_on_leduc(tmp_path):
    # skipped subtrees keep the values of their last visit: the checkpoint holds them (on
    # Kuhn nothing is skipped for long enough to tell)
    make = lambda g: cfrkit.PrunedCFR(g, threshold=0.01, regret_pruning=False)  # noqa: E731
    straight, resumed = stop_and_continue(make, LeducPoker(), tmp_path, 30, 30)
    assert_same_run(straight, resumed)


@pytest.mark.parametrize("name", sorted(NAMED))
def test_every_named_trainer_continues_bit_for_bit(name, tmp_path):
    straight, resumed = stop_and_continue(NAMED[name], KuhnPoker(), tmp_path, 333, 222)
    assert_same_run(straight, resumed)
    assert repr(resumed) == repr(straight)


def test_leduc_with_regret_pruning_continues_bit_for_bit(tmp_path):
    straight, resumed = stop_and_continue(lambda g: cfrkit.PrunedCFR(g), LeducPoker(), tmp_path,
                                          150, 150)
    assert_same_run(straight, resumed)


def test_locked_rows_survive_a_checkpoint(tmp_path):
    trainer = NAMED["locked"](KuhnPoker()).iterate(10)
    trainer.save(tmp_path / "locked.npz")
    loaded = cfrkit.load_trainer(tmp_path / "locked.npz", KuhnPoker())
    assert dict(loaded.average_policy()["K"]) == {"pass": 0.0, "bet": 1.0}
    assert dict(loaded.current_policy()["Qb"]) == {"pass": 0.5, "bet": 0.5}


def test_the_metadata_says_what_the_file_holds(tmp_path):
    trainer = cfrkit.ChanceSampledCFR(KuhnPoker(), seed=9).iterate(5)
    trainer.save(tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz", allow_pickle=False) as data:
        metadata = json.loads(str(data["metadata"]))
    assert metadata["format"] == "cfrkit.checkpoint" and metadata["version"] == 1
    assert metadata["cfrkit_version"] == cfrkit.__version__
    assert metadata["trainer"] == "ChanceSampledCFR" and metadata["iteration"] == 5
    assert metadata["arguments"]["seed"] == 9
    assert metadata["rng"] == [hex(int(x)) for x in trainer._state.rng]
    assert metadata["game"]["fingerprint"] == trainer.game.fingerprint


def test_saving_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "keep.npz"
    cfrkit.CFRPlus(KuhnPoker()).iterate(3).save(path)
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        cfrkit.CFRPlus(KuhnPoker()).iterate(7).save(path)
    assert path.read_bytes() == before  # the old checkpoint is untouched
    assert sorted(os.listdir(tmp_path)) == ["keep.npz"]  # and no temporary file is left


def test_custom_rules_need_to_be_given_back(tmp_path):
    rule = HalvingRule(alpha=1.0, beta=1.0)
    cfrkit.CFR(KuhnPoker(), rule=rule).iterate(4).save(tmp_path / "c.npz")
    with pytest.raises(CheckpointError, match="custom rule conftest.HalvingRule; pass rule="):
        cfrkit.load_trainer(tmp_path / "c.npz", KuhnPoker())
    with pytest.raises(CheckpointError, match="saved with rule"):
        cfrkit.load_trainer(tmp_path / "c.npz", KuhnPoker(), rule=HalvingRule(alpha=2.0, beta=1.0))
    assert cfrkit.load_trainer(tmp_path / "c.npz", KuhnPoker(), rule=rule).iteration == 4


# -- files that are not what they should be ---------------------------------------------------


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "good.npz"
    cfrkit.CFRPlus(KuhnPoker()).iterate(20).save(path)
    return path


def rewrite(path, tmp_path, change):
    """A copy of the checkpoint with its metadata or arrays changed by ``change(meta, arrays)``."""
    with np.load(path, allow_pickle=False) as data:
        metadata = json.loads(str(data["metadata"]))
        arrays = {k: data[k] for k in data.files if k != "metadata"}
    change(metadata, arrays)
    out = tmp_path / "changed.npz"
    np.savez(out, metadata=np.array(json.dumps(metadata)), **arrays)
    return out


@contextlib.contextmanager
def open_metadata(path):
    with np.load(path, allow_pickle=False) as data:
        yield json.loads(str(data["metadata"]))


def test_another_game_is_refused(saved):
    with pytest.raises(CheckpointError, match=r"good\.npz: made for another game \(KuhnPoker"):
        cfrkit.load_trainer(saved, KuhnPoker(players=3))


def test_missing_truncated_and_foreign_files_are_refused(saved, tmp_path):
    with pytest.raises(CheckpointError, match=r"nothere\.npz: no such file"):
        cfrkit.load_trainer(tmp_path / "nothere.npz", KuhnPoker())
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(saved.read_bytes()[: len(saved.read_bytes()) // 2])
    with pytest.raises(CheckpointError, match=r"truncated\.npz: "):
        cfrkit.load_trainer(truncated, KuhnPoker())
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(os.urandom(4096))
    with pytest.raises(CheckpointError, match=r"garbage\.npz: not a readable cfrkit checkpoint"):
        cfrkit.load_trainer(garbage, KuhnPoker())
    npy = tmp_path / "array.npy"
    np.save(npy, np.arange(3))
    with pytest.raises(CheckpointError, match=r"array\.npy: not a cfrkit checkpoint"):
        cfrkit.load_trainer(npy, KuhnPoker())
    other = tmp_path / "other.npz"
    np.savez(other, metadata=np.array(json.dumps({"format": "something else"})))
    with pytest.raises(CheckpointError, match=r"other\.npz: not a cfrkit checkpoint"):
        cfrkit.load_trainer(other, KuhnPoker())
    with pytest.raises(CheckpointError, match="is a directory"):
        cfrkit.load_trainer(tmp_path, KuhnPoker())


def test_a_corrupted_member_is_refused(saved, tmp_path):
    data = bytearray(saved.read_bytes())
    with zipfile.ZipFile(saved) as archive:
        info = archive.getinfo("state/regret.npy")
    data[info.header_offset + 200] ^= 0xFF  # flip bits inside the regrets
    corrupted = tmp_path / "corrupted.npz"
    corrupted.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"corrupted\.npz: "):
        cfrkit.load_trainer(corrupted, KuhnPoker())


def test_pickled_contents_are_never_loaded(saved, tmp_path):
    with np.load(saved, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["state/regret"] = np.array([object()] * 3, dtype=object)  # only loadable by pickle
    evil = tmp_path / "evil.npz"
    np.savez(evil, **arrays)
    with pytest.raises(CheckpointError, match=r"evil\.npz: not a readable cfrkit checkpoint"):
        cfrkit.load_trainer(evil, KuhnPoker())


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m, a: m.update(version=99), "format version 99, this cfrkit reads 1"),
        (lambda m, a: m.update(version=True), "format version True, this cfrkit reads 1"),
        (lambda m, a: m.update(trainer="os"), "unknown trainer 'os'"),
        (lambda m, a: m.pop("game"), "incomplete metadata"),
        (lambda m, a: m["game"].pop("fingerprint"), r"incomplete metadata \(no game fingerprint\)"),
        (lambda m, a: m["game"].update(fingerprint="0" * 64),
         r"made for another version of KuhnPoker\(players=2\) \(its tree differs\)"),
        (lambda m, a: m.update(iteration=-4), "bad iteration count -4"),
        (lambda m, a: m.update(nodes_touched=1.5), "bad count of nodes touched 1.5"),
        (lambda m, a: a.pop("state/regret"), "missing array 'state/regret'"),
        (lambda m, a: a.update({"state/regret": a["state/regret"][:-1]}), "array 'state/regret' is float64"),
        (lambda m, a: a.update({"state/regret": a["state/regret"].astype(np.float32)}), "array 'state/regret' is float32"),
        (lambda m, a: a["state/strategy_sum"].__setitem__(0, np.nan), "non-finite values"),
        (lambda m, a: m["arguments"].update(alternating="maybe"), "do not rebuild it"),
    ],
)
def test_inconsistent_checkpoints_are_refused(saved, tmp_path, change, message):
    with pytest.raises(CheckpointError, match=message):
        cfrkit.load_trainer(rewrite(saved, tmp_path, change), KuhnPoker())


def test_checkpoint_error_is_a_value_error():
    assert issubclass(CheckpointError, ValueError)


# -- arrays no run could have left: refused before a kernel reads them ---------------------------


def saved_at(trainer, path):
    trainer.save(path)
    return path


@pytest.fixture
def pruning(tmp_path):
    """Regret-based pruning with a window waiting to close (player 1's pending list)."""
    trainer = cfrkit.PrunedCFR(KuhnPoker()).iterate(20)
    assert list(trainer._state.pending_count) == [0, 1]
    return saved_at(trainer, tmp_path / "pruning.npz")


@pytest.fixture
def predictive(tmp_path):
    """A predictive rule on pruned passes: each player's list of predicted infosets."""
    trainer = cfrkit.PrunedCFR(KuhnPoker(), rule=RegretRule.predictive_plus()).iterate(7)
    assert list(trainer._state.predicted_count) == [6, 6]
    return saved_at(trainer, tmp_path / "predictive.npz")


@pytest.fixture
def threshold(tmp_path):
    """Threshold pruning: the values a skipped subtree had at its last visit, kept."""
    trainer = cfrkit.PrunedCFR(KuhnPoker(), threshold=0.05).iterate(20)
    return saved_at(trainer, tmp_path / "threshold.npz")


def _negate_terminals(metadata, arrays):
    value = arrays["scratch/value"]
    terminal = compile_game(KuhnPoker()).tree.node_kind == TERMINAL
    value[0, terminal] = -value[0, terminal]  # player 0 would train on the other payoffs


@pytest.fixture
def lazy(tmp_path):
    """A discounting rule on pruned passes: running products of discounts, and each infoset's
    stamp of the product at its last update."""
    trainer = cfrkit.PrunedCFR(KuhnPoker(), rule=RegretRule.discounted()).iterate(9)
    assert trainer._state.discount_exponent[1, 1] < 0 and len(trainer._state.stamp_scale)
    return saved_at(trainer, tmp_path / "lazy.npz")


def _set(key, index, value):
    return lambda m, a: a[key].__setitem__(index, value)


@pytest.mark.parametrize(
    "fixture, change, message",
    [
        # the chance part of probs would deal other cards than the game's, silently
        ("saved", _set("state/probs", -1, 0.5), "'state/probs' holds chance probabilities other"),
        ("saved", _set("state/probs", 0, 0.25), "'state/probs' gives infoset 'J' a strategy that"),
        # a row off 1 by twice the 1e-9 tolerance (the next test loads one off by half of it)
        ("saved", _set("state/probs", 1, 2e-9), "'state/probs' gives infoset 'J' a strategy"),
        ("saved", _set("state/probs", slice(0, 2), [1.5, -0.5]), "gives infoset 'J' a strategy"),
        ("saved", _set("state/strategy_sum", 3, -1.0), "'state/strategy_sum' holds negative"),
        ("saved", _set("state/predicted_count", 0, 2), "'state/predicted_count' counts"),
        # predictive lists: counts and entries the kernels index with
        ("predictive", _set("state/predicted_count", 0, 10**9), "'state/predicted' lists"),
        ("predictive", _set("state/predicted_count", 1, -1), "'state/predicted_count' holds neg"),
        ("predictive", _set("state/predicted", 0, 10**6), "'state/predicted' lists infosets"),
        ("predictive", _set("state/predicted", 0, 7), "that are not player 0's"),  # player 1's
        ("predictive", _set("state/predicted", 1, 0), "(or lists one twice)"),
        # regret-based pruning: window states and the pending lists that mark them
        ("pruning", _set("state/window", 0, 77), "'state/window' holds unknown window states"),
        ("pruning", _set("state/pending_count", 1, 10**9), "player 1's closing and opening"),
        ("pruning", _set("state/pending_count", 0, 1), "player 0's closing and opening"),
        ("pruning", _set("state/pending", (1, 0), 10**6), "player 1's closing and opening"),
        ("pruning", _set("state/accumulations", 0, -3), "'state/accumulations' holds negative"),
        # lazy discounts: the kernels divide by an infoset's stamp, and scale by the quotient
        ("lazy", _set("state/stamp_scale", (3, 1), 0.0), "'state/stamp_scale' holds a product"),
        ("lazy", _set("state/discount_scale", (1, 0), 1.0), "not a frexp mantissa"),
        ("lazy", _set("state/stamp_exponent", (2, 1), -10**6), "below the current one"),
        ("lazy", _set("state/discount_exponent", (0, 1), -10**6), "a product of discounts that grew"),
        # a product above 1 (no discount grows), or one whose difference would wrap in int64
        ("lazy", _set("state/stamp_exponent", (2, 1), 2**40), "a product of discounts above 1"),
        ("lazy", _set("state/discount_exponent", (1, 1), -(2**63)), "above 1 or out of range"),
        # finite but past any run: the kernels' sums over actions overflowed to inf and nan
        ("saved", _set("state/regret", slice(0, 2), 1e308), "'state/regret' holds values larger"),
        ("saved", _set("state/strategy_sum", 0, 1.7e308), "holds values larger than any run"),
        # threshold pruning reads these instead of walking a subtree
        ("threshold", _negate_terminals, "'scratch/value' holds values no strategy gives"),
        ("threshold", _set("scratch/value", (1, 0), 5.0), "'scratch/value' holds values no"),
    ],
)
def test_states_no_run_could_leave_are_refused(request, tmp_path, fixture, change, message):
    changed = rewrite(request.getfixturevalue(fixture), tmp_path, change)
    with pytest.raises(CheckpointError, match=re.escape(message)):
        cfrkit.load_trainer(changed, KuhnPoker())


def test_a_row_within_the_tolerance_and_a_fresh_trainer_load(saved, tmp_path):
    with np.load(saved) as data:
        assert data["state/probs"][:2].tolist() == [1.0, 0.0]  # J's row, by now
    off = rewrite(saved, tmp_path, _set("state/probs", 1, 5e-10))
    assert cfrkit.load_trainer(off, KuhnPoker()).iteration > 0
    fresh = cfrkit.CFRPlus(KuhnPoker()).save(tmp_path / "fresh.npz")  # iteration 0
    loaded = cfrkit.load_trainer(fresh, KuhnPoker())
    assert loaded.iteration == 0 and loaded.iterate(5).iteration == 5


def test_a_sampled_trainers_random_streams_must_not_be_all_zero(tmp_path):
    path = tmp_path / "streams.npz"
    cfrkit.ExternalSamplingCFR(KuhnPoker(), seed=1, streams=2).iterate(3).save(path)
    assert cfrkit.load_trainer(path, KuhnPoker()).iteration == 3
    zero_row = rewrite(path, tmp_path, _set("streams/rng", 1, 0))
    with pytest.raises(CheckpointError, match="'streams/rng' holds an all-zero random stream"):
        cfrkit.load_trainer(zero_row, KuhnPoker())
    cfrkit.ChanceSampledCFR(KuhnPoker(), seed=1).iterate(3).save(path)
    with pytest.raises(CheckpointError, match="'state/rng' is all zeros"):
        cfrkit.load_trainer(rewrite(path, tmp_path, _set("state/rng", slice(None), 0)),
                            KuhnPoker())


@pytest.mark.parametrize("fixture", ["pruning", "predictive"])
def test_scrambled_bookkeeping_is_refused_or_harmless(request, tmp_path, fixture):
    """Random values in the lists and counts the kernels index with: each file either loads
    and runs, or is refused (an out-of-range index would crash the process instead)."""
    path = request.getfixturevalue(fixture)
    keys = ["state/window", "state/pending", "state/pending_count"] if fixture == "pruning" \
        else ["state/predicted", "state/predicted_count"]
    rng = np.random.default_rng(7)
    refused = 0
    for _ in range(60):
        def scramble(m, a):
            key = keys[rng.integers(len(keys))]
            flat = a[key].reshape(-1)
            values = [-1, 0, 1, 2, 3, 11, 12, 47, 100] + ([10**6] if flat.itemsize > 1 else [])
            flat[rng.integers(flat.size)] = rng.choice(values)
        try:
            trainer = cfrkit.load_trainer(rewrite(path, tmp_path, scramble), KuhnPoker())
        except CheckpointError:
            refused += 1
            continue
        trainer.iterate(25)
        assert np.isfinite(cfrkit.nash_conv(KuhnPoker(), trainer.average_policy()))
    assert 20 < refused < 60  # both outcomes were tried


def test_a_custom_rules_own_fields_are_saved_and_checked(tmp_path):
    @dataclasses.dataclass(frozen=True)
    class Decay(RegretRule):
        power: float = 1.0

        def schedule(self, iterations):
            t = np.asarray(iterations, dtype=np.float64)
            return np.column_stack([np.ones_like(t), np.ones_like(t), t**self.power])

    path = tmp_path / "decay.npz"
    straight = cfrkit.CFR(KuhnPoker(), rule=Decay(power=2.0)).iterate(30)
    cfrkit.CFR(KuhnPoker(), rule=Decay(power=2.0)).iterate(10).save(path)
    with open_metadata(path) as metadata:
        assert metadata["rule"]["fields"]["power"] == 2.0
    with pytest.raises(CheckpointError, match=r"power=2\.0\), not .*Decay\(.*power=5\.0\)"):
        cfrkit.load_trainer(path, KuhnPoker(), rule=Decay(power=5.0))
    resumed = cfrkit.load_trainer(path, KuhnPoker(), rule=Decay(power=2.0)).iterate(20)
    assert_same_run(straight, resumed)


def test_a_rule_given_for_a_preset_must_be_its_own(saved):
    with pytest.raises(CheckpointError, match=r"saved with rule cfrkit\.rules\.RegretRule\("):
        cfrkit.load_trainer(saved, KuhnPoker(), rule=RegretRule.vanilla())
    assert cfrkit.load_trainer(saved, KuhnPoker(), rule=RegretRule.cfr_plus()).iteration == 20


# -- damaged archives and other files -------------------------------------------------------------


def test_every_damaged_zip_directory_byte_is_a_checkpoint_error(saved, tmp_path):
    """Flipped bits in the archive's directory: zipfile raises NotImplementedError (a zip
    version or compression method it lacks) or RuntimeError (a member flagged encrypted)
    besides BadZipFile; each must come out as a CheckpointError, or the file still loads."""
    raw = saved.read_bytes()
    with zipfile.ZipFile(saved) as archive:
        start = min(info.header_offset for info in archive.infolist())
    directory = raw.rfind(b"PK\x01\x02", start)  # the last member's directory entry
    damaged = tmp_path / "damaged.npz"
    outcomes = set()
    for offset in range(directory, len(raw)):
        for bit in (0, 3, 7):
            data = bytearray(raw)
            data[offset] ^= 1 << bit
            damaged.write_bytes(bytes(data))
            try:
                cfrkit.load_trainer(damaged, KuhnPoker())
                outcomes.add("loaded")
            except CheckpointError as exc:
                outcomes.add(str(exc).split(": ", 1)[1].split(" (")[0])
    assert "truncated or corrupted" in outcomes


def test_a_file_that_is_not_an_npz_is_not_offered_to_unpickle(tmp_path):
    text = tmp_path / "policy.json"
    text.write_text('{"format": "cfrkit.policy"}')
    with pytest.raises(CheckpointError) as info:
        cfrkit.load_trainer(text, KuhnPoker())
    assert str(info.value) == f"{text}: not a readable cfrkit checkpoint (not an .npz file)"
