"""Pictures of a run: convergence curves of :class:`~cfrkit.SolveRecord` and strategy heat maps.

matplotlib is an optional extra (``pip install cfrkit[plot]``); importing this module without
it raises :class:`ImportError` saying so. The module never chooses a backend: figures are made
with :mod:`matplotlib.pyplot`, so they show inline in notebooks and with ``plt.show()`` in
scripts, and headless runs pick ``Agg`` as matplotlib always does (or set ``MPLBACKEND=Agg``).
Figures made here stay registered with pyplot like any other; close them with
``plt.close(fig)`` when drawing many.

Examples
--------
>>> import cfrkit, cfrkit.games, cfrkit.plot
>>> policy = cfrkit.CFRPlus(cfrkit.games.KuhnPoker()).iterate(200).average_policy()
>>> fig = cfrkit.plot.strategy(policy)
>>> fig.savefig("kuhn_strategy.png")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np

_INSTALL_HINT = (
    "cfrkit.plot needs matplotlib, which is not installed: "
    "pip install cfrkit[plot]  (or: pip install matplotlib)"
)

try:
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes
    from matplotlib.colors import Colormap
    from matplotlib.figure import Figure
    from matplotlib.image import AxesImage
    from matplotlib.ticker import LogFormatterSciNotation
except ImportError as exc:
    raise ImportError(_INSTALL_HINT) from exc

from ._numbers import check_bool, integer_value
from ._text import short_repr
from .policy import Policy
from .record import SolveRecord
from .sweeps import _plain, _setting_label, load_sweep

__all__ = ["convergence", "strategy", "sweep"]

XAxis = Literal["both", "iterations", "seconds"]
Metric = Literal["nash_conv", "exploitability"]

_X_CHOICES = ("both", "iterations", "seconds")
_METRIC_CHOICES = ("nash_conv", "exploitability")
_X_LABELS = {
    "iterations": "iterations",
    "seconds": "wall-clock seconds (training + evaluation)",
}
_X_TITLES = {"iterations": "iterations", "seconds": "wall-clock time"}
_METRIC_LABELS = {
    "nash_conv": "NashConv of the average policy",
    "exploitability": "exploitability of the average policy",
}
_METRIC_NAMES = {"nash_conv": "NashConv", "exploitability": "Exploitability"}
_LINESTYLES = ("-", "--", ":", "-.")
_MARKER_MAX_POINTS = 25  # short records get point markers: a few checks read as dots, not a line
_ANNOTATE_MAX_ROWS = 80  # above this many rows per panel, cell texts would overlap


# -- convergence -------------------------------------------------------------------------------


def convergence(
    records: SolveRecord | Sequence[SolveRecord],
    ax: Axes | Sequence[Axes] | None = None,
    *,
    x: XAxis = "both",
    metric: Metric = "nash_conv",
    labels: Sequence[str] | None = None,
    title: str | None = None,
    floor: float = 1e-12,
) -> Figure:
    """Plot NashConv (or exploitability) of one or several runs, log-log.

    Each record is one line, drawn in the same colour on every panel, against the iteration
    count, the wall-clock seconds of the run (``record.seconds``: training and evaluation, the
    time a user waited), or both side by side.

    Parameters
    ----------
    records : SolveRecord or sequence of SolveRecord
        The runs to draw, e.g. what :meth:`~cfrkit.Trainer.solve` returned.
    ax : matplotlib Axes, sequence of Axes, or None
        Where to draw. ``None`` makes a new figure (two panels for ``x="both"``, else one).
        One ``Axes`` takes a single panel, so ``x`` must then be ``"iterations"`` or
        ``"seconds"``; ``x="both"`` takes a pair of axes (iterations first, then seconds).
    x : {"both", "iterations", "seconds"}
        The horizontal axis.
    metric : {"nash_conv", "exploitability"}
        The vertical axis. Exploitability (NashConv / 2) exists only for two-player zero-sum
        games: a record without it raises :class:`ValueError`.
    labels : sequence of str, optional
        One legend label per record. By default the record's ``trainer``; when several records
        share a trainer, the game is appended (``"CFRPlus on LeducPoker()"``), and runs that
        still coincide get ``#1``, ``#2``, ... in their order.
    title : str, optional
        Heading of the figure (``x="both"``) or of the panel. By default the panels are titled
        by their axis, with the game prepended when all records share one; ``""`` draws none.
    floor : float, optional
        Log axes cannot show zero or negative numbers: metric values below ``floor`` (an exact
        0, or -1e-17 of rounding) are drawn at ``floor`` (default 1e-12), so a run that reaches
        an exact equilibrium drops to the bottom of the plot instead of vanishing. Points whose
        x value is not positive (a check at iteration 0, or at 0 seconds) are left out of the
        line, as there is no place for them on a log axis.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (the new one, or the one holding ``ax``); its panels are
        ``fig.axes``.

    Raises
    ------
    ValueError
        For an unknown ``x`` or ``metric``, an ``ax`` that does not match ``x``, ``labels`` of
        the wrong length, an empty ``records``, a record whose arrays differ in length, or
        ``metric="exploitability"`` on a record without exploitability (named in the message).
    TypeError
        If ``records`` holds something that is not a :class:`~cfrkit.SolveRecord`.

    Examples
    --------
    >>> import cfrkit.plot
    >>> fig = cfrkit.plot.convergence([record_cfr, record_cfr_plus])  # doctest: +SKIP
    >>> fig.savefig("convergence.png")  # doctest: +SKIP

    One panel on axes of your own:

    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()  # doctest: +SKIP
    >>> cfrkit.plot.convergence(record, ax, x="seconds", metric="exploitability")  # doctest: +SKIP
    """
    _check_options(x, metric, floor)
    runs = _as_records(records)
    names = _labels(runs, labels)
    curves = [_curve(i, run, metric) for i, run in enumerate(runs)]
    panels = ("iterations", "seconds") if x == "both" else (x,)

    if ax is None:
        size = (11.0, 4.2) if len(panels) == 2 else (6.0, 4.2)
        fig, grid = plt.subplots(1, len(panels), figsize=size, layout="constrained", squeeze=False)
        axes = list(grid[0])
    else:
        axes = _as_axes(ax)
        if len(axes) != len(panels):
            if x == "both":
                raise ValueError(
                    f"x='both' draws two panels and needs two axes, got {len(axes)}; pass "
                    "x='iterations' or x='seconds' to draw on one Axes"
                )
            raise ValueError(f"x={x!r} draws one panel and needs one Axes, got {len(axes)}")
        fig = axes[0].figure

    games = {run.game for run in runs}
    game = games.pop() if len(games) == 1 else None
    for axis, panel in zip(axes, panels):
        for i, (name, (iterations, seconds, values)) in enumerate(zip(names, curves)):
            xs = iterations if panel == "iterations" else seconds
            keep = xs > 0  # no place for 0 on a log axis
            ys = np.maximum(values[keep], floor)
            axis.plot(
                xs[keep],
                ys,
                color=f"C{i % 10}",  # the same run has the same colour on both panels
                linestyle=_LINESTYLES[(i // 10) % len(_LINESTYLES)],  # past 10 runs colours repeat
                marker="o" if ys.shape[0] <= _MARKER_MAX_POINTS else None,
                markersize=3,
                linewidth=1.5,
                label=name,
            )
        _fit_limits(axis)
        _log_axes(axis, panel, metric)
        heading = f"{_METRIC_NAMES[metric]} vs {_X_TITLES[panel]}"
        if len(panels) == 1 and title is not None:
            heading = title
        elif len(panels) == 1 and game is not None:
            heading = f"{game}: {heading}"
        if heading:
            axis.set_title(heading)
    if len(panels) == 2:
        suptitle = title if title is not None else game
        if suptitle:
            fig.suptitle(suptitle)
    axes[0].legend(fontsize="small")  # one legend: the panels share their lines
    return fig


def _as_records(records: SolveRecord | Sequence[SolveRecord]) -> list[SolveRecord]:
    if isinstance(records, SolveRecord):
        runs = [records]
    elif isinstance(records, Iterable) and not isinstance(records, (str, bytes)):
        runs = list(records)
    else:
        raise TypeError(
            f"records must be a SolveRecord or a sequence of them, got {type(records).__name__}"
        )
    if not runs:
        raise ValueError("records is empty: pass a SolveRecord or a sequence of them")
    for i, run in enumerate(runs):
        if not isinstance(run, SolveRecord):
            raise TypeError(f"records[{i}] is a {type(run).__name__}, not a cfrkit.SolveRecord")
    return runs


def _labels(runs: list[SolveRecord], labels: Sequence[str] | None) -> list[str]:
    if labels is not None:
        names = [labels] if isinstance(labels, str) else [str(label) for label in labels]
        if len(names) != len(runs):
            raise ValueError(f"{len(names)} labels for {len(runs)} records")
        return names
    trainers = [run.trainer for run in runs]
    names = [
        f"{run.trainer} on {run.game}" if trainers.count(run.trainer) > 1 else run.trainer
        for run in runs
    ]
    seen: dict[str, int] = {}
    numbered = []
    for name in names:
        if names.count(name) > 1:
            seen[name] = seen.get(name, 0) + 1
            numbered.append(f"{name} #{seen[name]}")
        else:
            numbered.append(name)
    return numbered


def _curve(i: int, run: SolveRecord, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    values = getattr(run, metric)
    if values is None:
        raise ValueError(
            f"records[{i}] ({run!r}) has no {metric} (defined for two-player zero-sum games "
            "only); plot metric='nash_conv' instead"
        )
    iterations = np.asarray(run.iterations, dtype=np.float64)
    seconds = np.asarray(run.seconds, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    if not iterations.ndim == seconds.ndim == values.ndim == 1 or not (
        iterations.shape == seconds.shape == values.shape
    ):
        raise ValueError(
            f"records[{i}] ({run!r}): iterations, seconds and {metric} must be 1-d arrays of one "
            f"length, got shapes {iterations.shape}, {seconds.shape}, {values.shape}"
        )
    return iterations, seconds, values


def _as_axes(ax: Axes | Sequence[Axes]) -> list[Axes]:
    axes = [ax] if isinstance(ax, Axes) else list(np.ravel(np.asarray(ax, dtype=object)))
    for axis in axes:
        if not isinstance(axis, Axes):
            raise TypeError(f"ax must be a matplotlib Axes or a sequence of them, got {axis!r}")
    return axes


# -- strategy heat map ---------------------------------------------------------------------------


def strategy(
    policy: Policy,
    player: int | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    *,
    max_infosets: int | None = 60,
    annotate: bool | None = None,
) -> Figure:
    """Draw a policy as a heat map per player: one row per infoset, one column per action.

    Rows are the player's infosets sorted by key, columns the action positions in each
    infoset's own order, and the colour is the probability on a fixed [0, 1] scale with one
    colour bar. Infosets may have different actions (Leduc has ``call/raise`` and
    ``fold/call/raise``): when every shown row has the same actions, the columns are labelled
    with them; otherwise columns are numbered, each cell is labelled with its action, and
    positions an infoset does not have are left blank (grey).

    Parameters
    ----------
    policy : Policy
        The policy to draw, e.g. ``trainer.average_policy()``.
    player : int, optional
        The player to draw; ``None`` draws one panel per player (players who never act are
        left out).
    ax : matplotlib Axes, sequence of Axes, or None
        Where to draw: ``None`` makes a new figure, else one ``Axes`` per panel drawn (one for
        a given ``player``).
    max_infosets : int or None, optional
        Large games would give an unreadable figure (Leduc has 468 infosets per player), so
        each panel shows the first ``max_infosets`` infosets in key order (default 60) and its
        title says how many were left out. ``None`` shows every infoset.
    annotate : bool, optional
        Write each cell's probability (and its action, when columns are numbered) in it. By
        default cells are annotated when a panel has at most 80 rows; otherwise, with differing
        actions, each row label lists its actions instead.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on. Its first axes are the panels, in player order, then the colour
        bar's; each panel holds one image (``fig.axes[i].images[0]``) whose array is the
        masked ``[infoset, action]`` probability table shown.

    Raises
    ------
    ValueError
        For a player out of range or without infosets, a ``max_infosets`` that is not a
        positive integer or ``None``, or an ``ax`` that does not give one Axes per panel.
    TypeError
        If ``policy`` is not a :class:`~cfrkit.Policy`.

    Examples
    --------
    >>> import cfrkit, cfrkit.games, cfrkit.plot
    >>> policy = cfrkit.VanillaCFR(cfrkit.games.LeducPoker()).iterate(5).average_policy()
    >>> fig = cfrkit.plot.strategy(policy, player=0)  # first 60 of 468 infosets
    >>> fig.savefig("leduc_player0.png")  # doctest: +SKIP
    """
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be a cfrkit.Policy, got {type(policy).__name__}")
    if max_infosets is not None and (integer_value(max_infosets) is None or max_infosets < 1):
        raise ValueError(f"max_infosets must be a positive integer or None, got {max_infosets!r}")
    if annotate is not None:
        annotate = check_bool("annotate", annotate)
    compiled = policy.game
    by_player: dict[int, list[str]] = {p: [] for p in range(compiled.num_players)}
    for key in compiled.infoset_keys:
        by_player[compiled.infosets[key].player].append(key)

    if player is None:
        players = [p for p in range(compiled.num_players) if by_player[p]]
        if not players:
            raise ValueError(f"{compiled.game!r} has no infosets to draw")
    else:
        if integer_value(player) is None or not 0 <= player < compiled.num_players:
            raise ValueError(
                f"player must be an int in [0, {compiled.num_players}) for {compiled.game!r}, "
                f"got {player!r}"
            )
        if not by_player[int(player)]:
            raise ValueError(f"player {player} has no infosets in {compiled.game!r}")
        players = [int(player)]

    panels = [_heat_panel(policy, p, sorted(by_player[p]), max_infosets) for p in players]
    if ax is None:
        fig, axes = _heat_figure(panels, annotate)
    else:
        axes = _as_axes(ax)
        if len(axes) != len(players):
            raise ValueError(
                f"{len(players)} panel(s) to draw (players {players}) but {len(axes)} Axes given; "
                "pass player= to draw one player on one Axes"
            )
        fig = axes[0].figure

    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#e6e6e6")  # grey: no such action
    images = [_draw_panel(axis, panel, annotate, cmap) for axis, panel in zip(axes, panels)]
    rows = max(len(panel.keys) for panel in panels)
    # a slim bar: the default (15% of the width, aspect 20) is a slab beside a tall map
    fig.colorbar(images[0], ax=axes, label="probability", fraction=0.05, aspect=max(20, rows // 2))
    if ax is None:
        fig.suptitle(f"Strategy: {compiled.game!r}")
    return fig


class _Panel(NamedTuple):
    player: int
    keys: list[str]  # the infosets shown, in key order
    actions: list[tuple]  # each shown infoset's actions
    table: np.ma.MaskedArray  # [infoset, action position]; masked where an infoset has fewer
    total: int  # the player's number of infosets, shown or not

    @property
    def same_actions(self) -> bool:
        return len(set(self.actions)) == 1

    def annotated(self, annotate: bool | None) -> bool:
        return annotate if annotate is not None else len(self.keys) <= _ANNOTATE_MAX_ROWS


def _heat_panel(policy: Policy, player: int, keys: list[str], max_infosets: int | None) -> _Panel:
    compiled = policy.game
    total = len(keys)
    if max_infosets is not None:
        keys = keys[:max_infosets]
    indices = [compiled.key_index[k] for k in keys]
    actions = [compiled.infoset_actions[s] for s in indices]
    width = max(len(a) for a in actions)
    table = np.full((len(keys), width), np.nan)  # NaN, then masked: positions with no action
    for row, (s, acts) in enumerate(zip(indices, actions)):
        start = int(compiled.tree.infoset_first_slot[s])
        table[row, : len(acts)] = policy.table[start : start + len(acts)]
    return _Panel(player, keys, actions, np.ma.masked_invalid(table), total)


def _draw_panel(axis: Axes, panel: _Panel, annotate: bool | None, cmap: Colormap) -> AxesImage:
    keys, actions, table = panel.keys, panel.actions, panel.table
    image = axis.imshow(
        table, cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest"
    )
    cells = panel.annotated(annotate)
    width = table.shape[1]
    axis.set_xticks(range(width))
    if panel.same_actions:
        axis.set_xticklabels([str(a) for a in actions[0]])
    else:
        axis.set_xticklabels([f"action {j + 1}" for j in range(width)])
    axis.xaxis.tick_top()  # column names next to the title, where the eye starts
    if panel.same_actions or cells:
        row_labels = list(keys)
    else:  # no cell text to say which action a column is: list the actions per row
        row_labels = [f"{k}  [{'/'.join(map(str, acts))}]" for k, acts in zip(keys, actions)]
    axis.set_yticks(range(len(keys)))
    axis.set_yticklabels(row_labels, fontsize="small" if len(keys) > 20 else None)
    axis.set_ylabel("infoset")
    if cells:
        for i, acts in enumerate(actions):
            for j, action in enumerate(acts):
                prob = float(table.data[i, j])
                axis.text(
                    j,
                    i,
                    f"{prob:.2f}" if panel.same_actions else f"{action} {prob:.2f}",
                    ha="center",
                    va="center",
                    fontsize="x-small",
                    color="white" if prob < 0.6 else "black",  # readable on viridis
                )
    heading = f"player {panel.player}"
    shown = len(keys)
    if shown < panel.total:
        heading += f": first {shown} of {panel.total} infosets ({panel.total - shown} left out)"
    axis.set_title(heading)
    return image


def _heat_figure(panels: list[_Panel], annotate: bool | None) -> tuple[Figure, list[Axes]]:
    """A figure sized to its tables: rows set the height, label and cell widths the width."""
    rows = max(len(panel.keys) for panel in panels)
    width = 1.2  # the colour bar
    for panel in panels:
        cells = panel.annotated(annotate)
        label_chars = max(len(k) for k in panel.keys) + (0 if panel.same_actions or cells else 16)
        cell = 0.9 if cells and not panel.same_actions else 0.6
        width += 0.8 + 0.075 * label_chars + cell * panel.table.shape[1]
    height = 1.6 + 0.22 * rows
    fig, axes = plt.subplots(
        1,
        len(panels),
        figsize=(max(width, 4.0), max(height, 3.0)),
        layout="constrained",
        squeeze=False,
        gridspec_kw={"width_ratios": [panel.table.shape[1] for panel in panels]},
    )
    return fig, list(axes[0])


# -- sweeps -------------------------------------------------------------------------------------


def sweep(
    table: Any,
    *,
    x: XAxis = "both",
    metric: Metric = "nash_conv",
    floor: float = 1e-12,
    title: str | None = None,
) -> Figure:
    """Plot a sweep's convergence: one row of panels per game, one line per trainer setting.

    Runs that differ only in their seed form one group, drawn as their median (bold) with the
    range of the seeds shaded and each seed faint behind (runs of one setting under different
    stopping rules, from several sweeps into one output, are separate groups). The median and
    range are taken of log-log interpolations of the runs on a common grid spanning where
    every run of the group has checks (the checks of sampled runs fall at different
    iterations); a group of one run is drawn as that run. Failed runs (``status="error"``)
    are left out.

    Parameters
    ----------
    table : pyarrow.Table, sequence of dict, str or os.PathLike
        What :func:`cfrkit.sweep` returned or :func:`cfrkit.load_sweep` read (anything with
        ``to_pylist()``), its rows as dicts, or a path :func:`cfrkit.load_sweep` reads (the
        ``output`` of a sweep).
    x : {"both", "iterations", "seconds"}
        The horizontal axis: iterations, the runs' wall-clock seconds, or a panel of each.
    metric : {"nash_conv", "exploitability"}
        The vertical axis; exploitability exists for two-player zero-sum games only, and a
        game without it raises :class:`ValueError`.
    floor : float, optional
        Values below it (an exact 0) are drawn at it, as in :func:`convergence`.
    title : str, optional
        Heading of the figure; by default none (each panel names its game).

    Returns
    -------
    matplotlib.figure.Figure
        One row of panels per game, in the table's order; each panel's lines are labelled
        ``"TRAINER PARAM=VALUE ..."``, with the stopping rule when the panel's lines differ in
        it, and the number of seeds when there are several.

    Raises
    ------
    ValueError
        For an unknown ``x`` or ``metric``, or a table with no successful run.
    TypeError
        If ``table`` is none of the above.

    Examples
    --------
    >>> import cfrkit, cfrkit.plot
    >>> table = cfrkit.load_sweep("results/")       # doctest: +SKIP
    >>> cfrkit.plot.sweep(table).savefig("sweep.png")  # doctest: +SKIP
    """
    _check_options(x, metric, floor)
    # game -> (setting label, stopping rule) -> run id -> its checks, in the table's order:
    # only the seeds of one setting and stopping rule are a group
    games: dict[str, dict[tuple[str, tuple], dict[str, list[Mapping]]]] = {}
    for row in _sweep_rows(table):
        if row.get("status") != "ok" or row.get("point") is None:
            continue
        setting = _setting_label(row["trainer"], row["params"])
        rule = tuple((name, row.get(name)) for name in _STOPPING_RULE)
        games.setdefault(row["game"], {}).setdefault((setting, rule), {}).setdefault(
            row["run_id"], []).append(row)
    if not games:
        raise ValueError("the table has no successful run to draw")
    panels = ("iterations", "seconds") if x == "both" else (x,)
    fig, grid = plt.subplots(
        len(games), len(panels), figsize=(5.5 * len(panels), 3.8 * len(games)),
        layout="constrained", squeeze=False,
    )
    for r, (game, settings) in enumerate(games.items()):
        # the stopping rule is named where it tells the panel's lines apart
        several = len({rule for _, rule in settings}) > 1
        labels = [f"{setting} [{' '.join(f'{k}={_plain(v)}' for k, v in rule if v is not None)}]"
                  if several else setting for setting, rule in settings]
        for c, panel in enumerate(panels):
            axis = grid[r][c]
            for i, (label, runs) in enumerate(zip(labels, settings.values())):
                curves = [_sweep_curve(game, checks, panel, metric, floor) for checks in runs.values()]
                _draw_group(axis, curves, label, f"C{i % 10}",
                            _LINESTYLES[(i // 10) % len(_LINESTYLES)])
            _fit_limits(axis)
            _log_axes(axis, panel, metric)
            # a long game name goes on a line of its own rather than past the panel
            joint = ": " if len(game) <= 24 else "\n"
            axis.set_title(f"{game}{joint}{_METRIC_NAMES[metric]} vs {_X_TITLES[panel]}")
        grid[r][0].legend(fontsize="small")
    if title:
        fig.suptitle(title)
    return fig


def _sweep_rows(table: Any) -> list[Mapping]:
    """The rows of :func:`sweep`'s ``table`` argument, or TypeError."""
    if isinstance(table, (str, os.PathLike)):
        table = load_sweep(table)
    if hasattr(table, "to_pylist"):
        table = table.to_pylist()
    rows = None
    if isinstance(table, Iterable) and not isinstance(table, (bytes, Mapping)):
        rows = list(table)
    if rows is None or not all(isinstance(row, Mapping) for row in rows):
        raise TypeError(f"table must be a sweep's table, its rows as dicts or the path of one, "
                        f"got {short_repr(table)}")
    return rows


def _sweep_curve(game: str, checks: Iterable[Mapping], panel: str, metric: str,
                 floor: float) -> tuple[np.ndarray, np.ndarray]:
    """One run's checks as ``(x, y)``, positive x only (a log axis), y floored."""
    ordered = sorted(checks, key=lambda row: row["point"])
    if any(row[metric] is None for row in ordered):
        raise ValueError(
            f"{game} has no {metric} (defined for two-player zero-sum games only); plot "
            "metric='nash_conv' instead"
        )
    xs = np.array([row["iteration" if panel == "iterations" else "seconds"] for row in ordered],
                  dtype=np.float64)
    ys = np.maximum(np.array([row[metric] for row in ordered], dtype=np.float64), floor)
    keep = xs > 0
    return xs[keep], ys[keep]


_GRID_POINTS = 200  # the common grid a group's median is taken on
_STOPPING_RULE = ("target_nash_conv", "max_iterations", "time_limit")  # the table's columns


def _draw_group(axis: Axes, curves: list[tuple[np.ndarray, np.ndarray]], label: str,
                color: str, linestyle: str) -> None:
    curves = [(xs, ys) for xs, ys in curves if xs.shape[0]]
    if not curves:
        return
    if len(curves) == 1:
        xs, ys = curves[0]
        axis.plot(xs, ys, color=color, linestyle=linestyle, linewidth=1.5, label=label,
                  marker="o" if xs.shape[0] <= _MARKER_MAX_POINTS else None, markersize=3)
        return
    for xs, ys in curves:  # each seed, faint
        axis.plot(xs, ys, color=color, linestyle=linestyle, linewidth=0.7, alpha=0.3)
    low = max(float(xs[0]) for xs, _ in curves)
    high = min(float(xs[-1]) for xs, _ in curves)
    label = f"{label} ({len(curves)} seeds: median, range)"
    if not low < high:  # the runs share no stretch of the axis: no median to draw
        axis.plot([], [], color=color, linestyle=linestyle, label=label)
        return
    common = np.geomspace(low, high, _GRID_POINTS)
    # log-log interpolation: straight segments on the plot, as the faint lines are drawn
    logs = np.array([np.interp(np.log(common), np.log(xs), np.log(ys)) for xs, ys in curves])
    axis.fill_between(common, np.exp(logs.min(axis=0)), np.exp(logs.max(axis=0)), color=color,
                      alpha=0.18, linewidth=0)
    axis.plot(common, np.exp(np.median(logs, axis=0)), color=color, linestyle=linestyle,
              linewidth=1.8, label=label)


def _fit_limits(axis: Axes) -> None:
    """Set the limits log axes cannot find themselves: a decade around the one value every
    point has (all runs solved exactly, at the floor), or 1 to 10 both ways for lines without
    a point (every check at x = 0), where matplotlib would refuse to draw the figure."""
    drawn = [np.asarray(line.get_ydata(), dtype=np.float64) for line in axis.get_lines()]
    drawn = np.concatenate(drawn) if drawn else np.ones(1)
    if not drawn.size:
        axis.set_xlim(1, 10)
        axis.set_ylim(0.1, 10)
    elif drawn.max() <= drawn.min() * (1 + 1e-9):  # exp(log(y)) rounds
        axis.set_ylim(drawn.min() / 10, drawn.max() * 10)


def _log_axes(axis, panel: str, metric: str) -> None:
    """Log-log axes with the panel's labels and a light grid."""
    axis.set_xscale("log")
    axis.set_yscale("log")
    # matplotlib's own minor labels collide on some ranges; none at all leaves a short range
    # (seconds of a quick run: 2e-4 to 9e-4) without a number
    axis.xaxis.set_minor_formatter(_MinorLogLabels())
    axis.yaxis.set_minor_formatter(_MinorLogLabels())
    axis.set_xlabel(_X_LABELS[panel])
    axis.set_ylabel(_METRIC_LABELS[metric])
    axis.grid(True, which="major", alpha=0.4)
    axis.grid(True, which="minor", alpha=0.12)


class _MinorLogLabels(LogFormatterSciNotation):
    """Labels of a log axis's minor ticks, for when its powers of ten are too few to read it by.

    With two or more powers of ten in view the minor ticks stay unlabelled: a span of decades
    reads best by them alone. With fewer, minor ticks are labelled, the sparsest choice of
    ``_MINOR_MANTISSAS`` that gives the axis two labels in all (every minor tick if none
    does). The choice is made each time the ticks are drawn, from the view limits of then:
    autoscaling settles them late, and a user may zoom or set them after the plot is made.
    """

    def __init__(self) -> None:
        super().__init__(labelOnlyBase=False)
        self._labelled: frozenset[float] = frozenset()

    def set_locs(self, locs: Any = None) -> None:
        locs = np.asarray(locs if locs is not None else [], dtype=np.float64)
        self._labelled = frozenset(self._chosen(locs).tolist())

    def __call__(self, x: float, pos: int | None = None) -> str:
        # set_locs saw the same values: matplotlib formats the locations it passed there
        return super().__call__(x, pos) if x in self._labelled else ""

    def _chosen(self, locs: np.ndarray) -> np.ndarray:
        """The minor tick locations to label, of ``locs``."""
        low, high = sorted(self.axis.get_view_interval())
        if not low > 0:  # no view a log axis can show yet
            return locs[:0]
        low, high = low * (1 - 1e-9), high * (1 + 1e-9)  # a tick at the very limit is drawn
        majors = np.asarray(self.axis.get_majorticklocs())
        majors_shown = int(((majors >= low) & (majors <= high)).sum())
        locs = locs[(locs >= low) & (locs <= high)]
        if majors_shown >= 2 or not locs.shape[0]:
            return locs[:0]
        leading = 10 ** (np.log10(locs) % 1.0)  # 2 for 2e-4
        digits = np.round(leading)
        if np.allclose(leading, digits, rtol=1e-6):
            for mantissas in _MINOR_MANTISSAS:
                chosen = locs[np.isin(digits, mantissas)]
                if majors_shown + chosen.shape[0] >= 2:
                    return chosen
            return locs
        # linear ticks: matplotlib's on a range too short for two log ones (1.1e-4 to
        # 1.9e-4), as many as fit unlabelled, so long labels need every second or fifth
        steps = np.round(locs / np.min(np.diff(locs), initial=np.inf))
        for every in (1, 2, 5):
            chosen = locs[steps % every == 0]
            if chosen.shape[0] <= _MAX_LINEAR_LABELS:
                break
        return chosen if chosen.shape[0] >= 2 else locs


# the minor ticks labelled on a log axis without two powers of ten in view, by leading digit,
# sparsest first: 2 and 5 suit a range of a decade or so, 2 4 6 8 one of a few tenths
_MINOR_MANTISSAS = ([2, 5], [2, 3, 5], [2, 4, 6, 8])
_MAX_LINEAR_LABELS = 5  # labels like 1.25x10^-4 side by side on a panel 5 inches wide


def _check_options(x: str, metric: str, floor: float) -> None:
    """The ``x``, ``metric`` and ``floor`` arguments the plots share, checked."""
    if x not in _X_CHOICES:
        raise ValueError(f"x must be one of {_X_CHOICES}, got {x!r}")
    if metric not in _METRIC_CHOICES:
        raise ValueError(f"metric must be one of {_METRIC_CHOICES}, got {metric!r}")
    if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not 0 < floor < np.inf:
        raise ValueError(f"floor must be a positive finite number, got {floor!r}")
