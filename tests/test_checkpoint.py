"""Checkpoints: continuing a loaded trainer is bit-identical; bad files give CheckpointError."""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np
import pytest

import cfrkit
from cfrkit import CheckpointError, RegretRule
from cfrkit.games import KuhnPoker, LeducPoker

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
    assert_same_run(straight, resumed.iterate(153))


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
        (lambda m, a: m.update(trainer="os"), "unknown trainer 'os'"),
        (lambda m, a: m.pop("game"), "incomplete metadata"),
        (lambda m, a: m.update(iteration=-4), "bad iteration count -4"),
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
