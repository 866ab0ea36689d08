"""cfrkit.plot: convergence curves and strategy heat maps draw exactly the data they are given."""

import importlib
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")  # headless: tests never open windows

import matplotlib.pyplot as plt  # noqa: E402

import cfrkit  # noqa: E402
import cfrkit.games  # noqa: E402
from cfrkit import SolveRecord  # noqa: E402
from cfrkit import plot as cfrplot  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")  # pyplot keeps every figure alive otherwise


def make_record(trainer="CFRPlus", game="KuhnPoker(players=2)", *, scale=1.0, exploitability=True,
                iterations=(1, 10, 100, 1000), nash_conv=None, seconds=None):
    iterations = np.array(iterations, dtype=np.int64)
    nash_conv = scale / iterations.astype(float) if nash_conv is None else np.array(nash_conv)
    seconds = iterations * 1e-3 if seconds is None else np.array(seconds, dtype=float)
    return SolveRecord(
        trainer=trainer,
        game=game,
        iterations=iterations,
        seconds=seconds,
        training_seconds=seconds * 0.9,
        nash_conv=nash_conv,
        exploitability=nash_conv / 2 if exploitability else None,
        stopped="target",
        evaluation_seconds=0.0,
    )


@pytest.fixture(scope="module")
def kuhn_policy():
    return cfrkit.CFRPlus(cfrkit.games.KuhnPoker()).iterate(200).average_policy()


@pytest.fixture(scope="module")
def leduc_policy():
    return cfrkit.VanillaCFR(cfrkit.games.LeducPoker()).iterate(5).average_policy()


def legend_labels(ax):
    return [text.get_text() for text in ax.get_legend().get_texts()]


def panels(fig):
    """The heat-map panels (the colour bar's axes hold no image)."""
    return [ax for ax in fig.axes if ax.images]


# -- optional dependency -----------------------------------------------------------------------


def test_import_without_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    monkeypatch.delitem(sys.modules, "cfrkit.plot", raising=False)  # force a fresh import
    with pytest.raises(ImportError, match=r"pip install cfrkit\[plot\]"):
        importlib.import_module("cfrkit.plot")


# -- convergence ---------------------------------------------------------------------------------


def test_convergence_draws_each_record_on_two_log_log_panels():
    records = [make_record("VanillaCFR", scale=2.0), make_record("CFRPlus", scale=1.0),
               make_record("DCFRPlus", scale=0.5, iterations=(2, 20, 200))]
    fig = cfrplot.convergence(records)
    assert isinstance(fig, matplotlib.figure.Figure)
    by_iterations, by_seconds = fig.axes
    for ax, field in ((by_iterations, "iterations"), (by_seconds, "seconds")):
        assert len(ax.get_lines()) == len(records)
        for line, record in zip(ax.get_lines(), records):
            np.testing.assert_array_equal(line.get_xdata(), getattr(record, field))
            np.testing.assert_array_equal(line.get_ydata(), record.nash_conv)
            assert line.get_label() == record.trainer
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        assert "NashConv" in ax.get_ylabel()
        assert ax.xaxis.get_gridlines()[0].get_visible()
    assert by_iterations.get_xlabel() == "iterations"
    assert "seconds" in by_seconds.get_xlabel()
    assert legend_labels(by_iterations) == ["VanillaCFR", "CFRPlus", "DCFRPlus"]
    # the same run has the same colour on both panels
    for left, right in zip(by_iterations.get_lines(), by_seconds.get_lines()):
        assert left.get_color() == right.get_color()
    assert fig._suptitle.get_text() == "KuhnPoker(players=2)"  # all records share one game


def test_convergence_one_record_on_a_given_axes_returns_its_figure():
    record = make_record()
    fig, ax = plt.subplots()
    result = cfrplot.convergence(record, ax, x="seconds", metric="exploitability", title="mine")
    assert result is fig
    assert fig.axes == [ax]
    (line,) = ax.get_lines()
    np.testing.assert_array_equal(line.get_xdata(), record.seconds)
    np.testing.assert_array_equal(line.get_ydata(), record.exploitability)
    assert ax.get_title() == "mine"
    assert "exploitability" in ax.get_ylabel()
    assert ax.get_xscale() == ax.get_yscale() == "log"


def test_convergence_single_panel_figure_and_pair_of_axes():
    fig = cfrplot.convergence([make_record(), make_record("CFR")], x="iterations")
    (ax,) = fig.axes
    assert len(ax.get_lines()) == 2
    assert ax.get_title() == "KuhnPoker(players=2): NashConv vs iterations"

    own, pair = plt.subplots(2, 1)  # a numpy array of axes is accepted for x="both"
    assert cfrplot.convergence(make_record(), pair) is own
    assert [len(ax.get_lines()) for ax in pair] == [1, 1]
    assert pair[0].get_xlabel() == "iterations" and "seconds" in pair[1].get_xlabel()


def test_duplicate_trainers_get_distinct_labels():
    records = [
        make_record("CFRPlus", "KuhnPoker(players=2)"),
        make_record("CFRPlus", "LeducPoker()"),
        make_record("CFRPlus", "LeducPoker()", scale=3.0),
        make_record("VanillaCFR", "LeducPoker()"),
    ]
    fig = cfrplot.convergence(records, x="iterations")
    labels = legend_labels(fig.axes[0])
    assert labels == [
        "CFRPlus on KuhnPoker(players=2)",
        "CFRPlus on LeducPoker() #1",
        "CFRPlus on LeducPoker() #2",
        "VanillaCFR",
    ]
    assert len(set(labels)) == len(records)
    assert fig.axes[0].get_title() == "NashConv vs iterations"  # several games: no game prefix


def test_custom_labels_and_title():
    fig = cfrplot.convergence([make_record(), make_record()], labels=["a", "b"], title="Kuhn")
    assert legend_labels(fig.axes[0]) == ["a", "b"]
    assert fig._suptitle.get_text() == "Kuhn"
    with pytest.raises(ValueError, match="1 labels for 2 records"):
        cfrplot.convergence([make_record(), make_record()], labels=["only one"])


def test_values_a_log_axis_cannot_show_are_clipped_or_left_out():
    record = make_record(iterations=(0, 1, 10, 100), nash_conv=[4.0, 1.0, 0.0, -1e-17],
                         seconds=[0.0, 0.1, 0.2, 0.3])
    fig = cfrplot.convergence(record, floor=1e-9)
    for ax, xs in zip(fig.axes, ([1, 10, 100], [0.1, 0.2, 0.3])):
        (line,) = ax.get_lines()
        np.testing.assert_array_equal(line.get_xdata(), xs)  # x = 0 has no place: left out
        np.testing.assert_array_equal(line.get_ydata(), [1.0, 1e-9, 1e-9])  # clipped to floor
    with pytest.raises(ValueError, match="floor"):
        cfrplot.convergence(record, floor=0.0)


def test_exploitability_missing_names_the_record():
    records = [make_record("CFRPlus"), make_record("VanillaCFR", "KuhnPoker(players=3)",
                                                   exploitability=False)]
    with pytest.raises(ValueError, match=r"records\[1\].*VanillaCFR on KuhnPoker\(players=3\)"):
        cfrplot.convergence(records, metric="exploitability")
    fig = cfrplot.convergence(records)  # NashConv exists for every record
    assert len(fig.axes[0].get_lines()) == 2


def test_convergence_rejects_bad_arguments():
    record = make_record()
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="x='both' draws two panels and needs two axes"):
        cfrplot.convergence(record, ax)
    with pytest.raises(ValueError, match="needs one Axes, got 2"):
        cfrplot.convergence(record, plt.subplots(1, 2)[1], x="iterations")
    with pytest.raises(ValueError, match="x must be one of"):
        cfrplot.convergence(record, x="time")
    with pytest.raises(ValueError, match="metric must be one of"):
        cfrplot.convergence(record, metric="regret")
    with pytest.raises(ValueError, match="records is empty"):
        cfrplot.convergence([])
    with pytest.raises(TypeError, match=r"records\[1\] is a dict"):
        cfrplot.convergence([record, record.to_dict()])
    with pytest.raises(TypeError, match="matplotlib Axes"):
        cfrplot.convergence(record, "ax", x="iterations")


def shown_tick_labels(axis, minor=False):
    """The tick labels a drawn figure shows on an axis: visible, not empty, within the limits."""
    low, high = sorted(axis.get_view_interval())
    at = 0 if axis.axis_name == "x" else 1
    return [label for label in axis.get_ticklabels(minor=minor)
            if label.get_visible() and label.get_text()
            and low * (1 - 1e-9) <= label.get_position()[at] <= high * (1 + 1e-9)]


@pytest.mark.parametrize("limits", [
    (2e-4, 9e-4),  # the seconds of a quick run: no power of ten in view
    (7.5e-4, 9.5e-4),  # only two minor ticks in view
    (0.3, 3.0),  # one power of ten: a minor label beside it
    (1.1e-4, 1.9e-4),  # too short for two log ticks: matplotlib's linear ones
])
def test_a_log_axis_short_of_two_decades_still_has_numbers(limits):
    low, high = limits
    seconds = np.geomspace(low, high, 4)
    fig = cfrplot.convergence(make_record(seconds=seconds, nash_conv=seconds * 1e3))
    by_seconds = fig.axes[1]
    by_seconds.set_xlim(low, high)  # exactly, not autoscaled
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for axis in (by_seconds.xaxis, by_seconds.yaxis):  # the y axis spans the same values
        labels = shown_tick_labels(axis) + shown_tick_labels(axis, minor=True)
        assert len(labels) >= 2, [label.get_text() for label in labels]
        boxes = sorted((label.get_window_extent(renderer) for label in labels),
                       key=lambda box: box.x0 if axis is by_seconds.xaxis else box.y0)
        for one, next_one in zip(boxes, boxes[1:]):  # sparse enough to read
            assert not one.overlaps(next_one)


def test_a_log_axis_short_of_two_decades_is_labelled_when_drawn():
    # a quick run's seconds, autoscaled only when the figure is drawn; then zoomed in
    fig = cfrplot.convergence(make_record(seconds=[2.4e-4, 3.1e-4, 5.5e-4, 7.6e-4]))
    by_seconds = fig.axes[1]
    fig.canvas.draw()
    assert [label.get_text() for label in shown_tick_labels(by_seconds.xaxis, minor=True)] == [
        r"$\mathdefault{3\times10^{-4}}$", r"$\mathdefault{5\times10^{-4}}$"]
    by_seconds.set_xlim(0.3, 30)  # two powers of ten: they alone are labelled
    fig.canvas.draw()
    assert not shown_tick_labels(by_seconds.xaxis, minor=True)
    assert len(shown_tick_labels(by_seconds.xaxis)) == 2


def test_log_axes_over_decades_label_only_powers_of_ten():
    rows = [*sweep_rows("a"), *sweep_rows("b", "dcfr", nash_conv=(0.5, 0.05, 0.005, 5e-4))]
    figures = [cfrplot.convergence([make_record(), make_record("CFR", scale=3.0)]),
               cfrplot.sweep(rows)]
    for fig in figures:
        fig.canvas.draw()
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                assert len(shown_tick_labels(axis)) >= 2
                assert not shown_tick_labels(axis, minor=True)  # no crowd between decades


# -- strategy heat maps --------------------------------------------------------------------------


def expected_rows(policy, keys):
    return [list(policy[key].values()) for key in keys]


def test_kuhn_heat_map_shows_every_probability(kuhn_policy):
    game = kuhn_policy.game
    fig = cfrplot.strategy(kuhn_policy)
    assert isinstance(fig, matplotlib.figure.Figure)
    heat = panels(fig)
    assert len(heat) == 2 and len(fig.axes) == 3  # one panel per player and a colour bar
    for player, ax in enumerate(heat):
        keys = sorted(k for k in game.infoset_keys if game.infosets[k].player == player)
        (image,) = ax.images
        table = image.get_array()
        assert table.shape == (6, 2) and not np.ma.is_masked(table)
        np.testing.assert_array_equal(table, expected_rows(kuhn_policy, keys))
        assert image.get_clim() == (0.0, 1.0)
        assert [t.get_text() for t in ax.get_yticklabels()] == keys
        assert [t.get_text() for t in ax.get_xticklabels()] == ["pass", "bet"]
        assert ax.get_title() == f"player {player}"
        # small map: every cell carries its probability
        texts = [t.get_text() for t in ax.texts]
        assert texts == [f"{p:.2f}" for row in expected_rows(kuhn_policy, keys) for p in row]
    assert fig.axes[2].get_ylabel() == "probability"


def test_leduc_heat_map_is_truncated_and_says_so(leduc_policy):
    game = leduc_policy.game
    fig = cfrplot.strategy(leduc_policy)
    heat = panels(fig)
    assert len(heat) == 2
    for player, ax in enumerate(heat):
        keys = sorted(k for k in game.infoset_keys if game.infosets[k].player == player)[:60]
        assert "first 60 of 468 infosets (408 left out)" in ax.get_title()
        table = ax.images[0].get_array()
        assert table.shape == (60, 3)
        for row, key in zip(table, keys):
            probs = list(leduc_policy[key].values())
            np.testing.assert_array_equal(row[: len(probs)], probs)
            assert row.mask[len(probs):].all()  # call/raise infosets have no third cell
        assert [t.get_text() for t in ax.get_xticklabels()] == ["action 1", "action 2", "action 3"]
        # actions differ by row, so the cells name them
        first = game.infoset_actions[game.key_index[keys[0]]]
        assert ax.texts[0].get_text().startswith(f"{first[0]} ")


def test_one_player_without_limit_lists_actions_per_row(leduc_policy):
    game = leduc_policy.game
    fig = cfrplot.strategy(leduc_policy, player=1, max_infosets=None)
    (ax,) = panels(fig)
    keys = sorted(k for k in game.infoset_keys if game.infosets[k].player == 1)
    assert ax.get_title() == "player 1"
    np.testing.assert_array_equal(ax.images[0].get_array()[:, 0],
                                  [leduc_policy[k][game.infosets[k].actions[0]] for k in keys])
    assert not ax.texts  # 468 rows: no cell texts ...
    labels = [t.get_text() for t in ax.get_yticklabels()]  # ... the row labels name the actions
    assert labels[0] == f"{keys[0]}  [{'/'.join(game.infosets[keys[0]].actions)}]"

    fig = cfrplot.strategy(leduc_policy, player=0, max_infosets=5, annotate=False)
    (ax,) = panels(fig)
    assert ax.images[0].get_array().shape[0] == 5 and not ax.texts
    assert "(463 left out)" in ax.get_title()


def test_strategy_on_given_axes(kuhn_policy):
    fig, axes = plt.subplots(1, 2)
    assert cfrplot.strategy(kuhn_policy, ax=axes) is fig
    assert all(len(ax.images) == 1 for ax in axes)
    fig, ax = plt.subplots()
    assert cfrplot.strategy(kuhn_policy, player=1, ax=ax) is fig
    assert ax.get_title() == "player 1"
    with pytest.raises(ValueError, match=r"2 panel\(s\) to draw .* but 1 Axes given"):
        cfrplot.strategy(kuhn_policy, ax=ax)


def test_strategy_rejects_bad_arguments(kuhn_policy):
    with pytest.raises(ValueError, match=r"player must be an int in \[0, 2\)"):
        cfrplot.strategy(kuhn_policy, player=2)
    with pytest.raises(ValueError, match="max_infosets must be a positive integer or None"):
        cfrplot.strategy(kuhn_policy, max_infosets=0)
    with pytest.raises(TypeError, match="cfrkit.Policy"):
        cfrplot.strategy(kuhn_policy.to_dict())
    with pytest.raises(ValueError, match="annotate must be a bool, got 'no'"):
        cfrplot.strategy(kuhn_policy, annotate="no")


def test_figures_save_as_png(tmp_path, kuhn_policy):
    paths = [tmp_path / "convergence.png", tmp_path / "strategy.png"]
    cfrplot.convergence([make_record(), make_record("CFR")]).savefig(paths[0])
    cfrplot.strategy(kuhn_policy).savefig(paths[1])
    for path in paths:
        assert path.read_bytes().startswith(b"\x89PNG") and path.stat().st_size > 1000


# -- sweeps ---------------------------------------------------------------------------------------


def test_convergence_without_a_point_on_a_panel_is_still_drawn(tmp_path):
    # a run stopped at its first check, at iteration 0 (--iterations 0, or a target met at
    # once): a log axis has no place for it, and matplotlib would refuse to save the figure
    for seconds in (0.0, 0.25):
        record = make_record(iterations=(0,), nash_conv=[0.9], seconds=[seconds])
        fig = cfrplot.convergence(record)
        assert [len(line.get_xdata()) for ax in fig.axes for line in ax.get_lines()] == \
            [0, 1 if seconds else 0]
        assert fig.axes[0].get_xlim() == (1, 10) and fig.axes[0].get_ylim() == (0.1, 10)
        fig.savefig(tmp_path / "empty.png")
        assert (tmp_path / "empty.png").stat().st_size > 1000


def sweep_rows(run_id, trainer="cfr+", params="{}", *, seed=None, max_iterations=100,
               target=None, nash_conv=(1.0, 0.1, 0.01)):
    """A run's rows of a sweep table, one per check at iterations 1, 10, 100, ..."""
    return [dict(run_id=run_id, game="kuhn", trainer=trainer, params=params, seed=seed,
                 target_nash_conv=target, max_iterations=max_iterations, time_limit=None,
                 status="ok", point=i, iteration=10**i, seconds=0.01 * 10**i, nash_conv=value)
            for i, value in enumerate(nash_conv)]


def test_sweep_groups_only_the_seeds_of_one_stopping_rule():
    # two sweeps of cfr+ into one output, with other budgets: two lines, each naming its rule,
    # not one group of "2 seeds"; the seeds of external sampling under one rule are one group
    rows = [*sweep_rows("a", max_iterations=2000), *sweep_rows("b", max_iterations=200000),
            *sweep_rows("c", "external-sampling", seed=0),
            *sweep_rows("d", "external-sampling", seed=1)]
    fig = cfrplot.sweep(rows, x="iterations")
    assert legend_labels(fig.axes[0]) == [
        "cfr+ [max_iterations=2000]", "cfr+ [max_iterations=200000]",
        "external-sampling [max_iterations=100] (2 seeds: median, range)"]
    # one stopping rule in the panel: no need to name it
    fig = cfrplot.sweep([*sweep_rows("e"), *rows[6:]], x="iterations")
    assert legend_labels(fig.axes[0]) == ["cfr+", "external-sampling (2 seeds: median, range)"]
    mixed = [*sweep_rows("a", target=1e-3, max_iterations=None), *sweep_rows("b")]
    assert legend_labels(cfrplot.sweep(mixed, x="iterations").axes[0]) == [
        "cfr+ [target_nash_conv=0.001]", "cfr+ [max_iterations=100]"]


def test_sweep_labels_read_equal_numbers_alike():
    # alpha 2 and 2.0 are one run of a sweep; an old table may hold both: one setting
    rows = [*sweep_rows("a", "dcfr", '{"alpha": 2}'), *sweep_rows("b", "dcfr", '{"alpha": 2.0}'),
            *sweep_rows("c", "dcfr", '{"alpha": 1.5}')]
    assert legend_labels(cfrplot.sweep(rows, x="iterations").axes[0]) == [
        "dcfr alpha=2 (2 seeds: median, range)", "dcfr alpha=1.5"]


def test_sweep_takes_the_path_of_an_output(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet  # noqa: F401
    from cfrkit.sweeps import SWEEP_COLUMNS, _schema

    rows = [{name: row.get(name) for name, _, _ in SWEEP_COLUMNS} for row in sweep_rows("a")]
    table = pa.Table.from_pylist(rows, schema=_schema())
    pa.parquet.write_table(table, tmp_path / "results.parquet")
    for path in (tmp_path, str(tmp_path / "results.parquet")):
        assert legend_labels(cfrplot.sweep(path).axes[0]) == ["cfr+"]
    for table in (None, 3, {"run_id": "a"}, ["kuhn"]):
        with pytest.raises(TypeError, match="table must be a sweep's table, its rows as dicts or"):
            cfrplot.sweep(table)
    with pytest.raises(ValueError, match="no successful run"):
        cfrplot.sweep([])
