"""Sweeps on Ray: a small grid end to end on a local Ray of 2 CPUs, its table against the same
runs made in this process, failures, resume, the files, the plot and the command line."""

from __future__ import annotations

import _thread
import contextlib
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pa = pytest.importorskip("pyarrow")

import cfrkit  # noqa: E402
import cfrkit.sweeps  # noqa: E402
from cfrkit.cli import _seeds, _split_top_level, main  # noqa: E402
from cfrkit.games import KuhnPoker, RockPaperScissors  # noqa: E402
from cfrkit.sweeps import SWEEP_COLUMNS  # noqa: E402

SCRIPT = shutil.which("cfrkit", path=str(Path(sys.executable).parent)) or shutil.which("cfrkit")
GAMES = {"kuhn": KuhnPoker, "rps": RockPaperScissors}


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray of 2 CPUs for the module's sweeps (they use the running session)."""
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def _runs(table) -> list[dict]:
    return table.filter(table["last"]).to_pylist()


# -- the command line first: its subprocess starts a Ray of its own, before the module's ---------


def test_cli_sweep_end_to_end(tmp_path):
    if SCRIPT is None:
        pytest.skip("the cfrkit console script is not installed (pip install the package)")
    pytest.importorskip("matplotlib")
    command = [SCRIPT, "sweep", "--games", "kuhn", "--trainers", "cfr+,external-sampling",
               "--param", "external-sampling:rule=vanilla,linear", "--seeds", "0-1",
               "--max-iterations", "100", "--output", "out/", "--num-cpus", "2",
               "--plot", "sweep.png"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, MPLBACKEND="Agg"))
    assert done.returncode == 0, (done.stdout, done.stderr)
    runs = _runs(cfrkit.load_sweep(tmp_path / "out"))
    # cfr+ once (deterministic), external sampling for 2 rules x 2 seeds
    assert sorted((r["trainer"], r["params"], r["seed"]) for r in runs) == [
        ("cfr+", "{}", None),
        ("external-sampling", '{"rule": "linear"}', 0),
        ("external-sampling", '{"rule": "linear"}', 1),
        ("external-sampling", '{"rule": "vanilla"}', 0),
        ("external-sampling", '{"rule": "vanilla"}', 1),
    ]
    assert all(r["status"] == "ok" and r["final_iteration"] == 100 for r in runs)
    # the rule preset is the one named: external sampling with the linear rule, seed 1
    linear = next(r for r in runs if r["params"] == '{"rule": "linear"}' and r["seed"] == 1)
    expected = cfrkit.ExternalSamplingCFR(KuhnPoker(), rule=cfrkit.RegretRule.linear(), seed=1)
    assert linear["final_nash_conv"] == expected.solve(max_iterations=100).nash_conv[-1]
    # the summary: one line per setting, the median NashConv of the two seeds
    vanilla = [r["final_nash_conv"] for r in runs if r["params"] == '{"rule": "vanilla"}']
    line = next(s for s in done.stdout.splitlines() if "rule=vanilla" in s)
    assert line.split()[:5] == ["kuhn", "external-sampling", "rule=vanilla", "2", "0"]
    assert float(line.split()[5]) == pytest.approx(np.median(vanilla), rel=1e-2)
    assert (tmp_path / "out" / "results.csv").exists() and (tmp_path / "sweep.png").stat().st_size
    # a line per finished run on stderr
    assert done.stderr.count("cfrkit sweep: [") == 5


def test_cli_sweep_bad_usage_is_one_line(tmp_path, capsys):
    # found before Ray starts: the names are checked in the driver
    base = ["sweep", "--max-iterations", "5", "--output", str(tmp_path / "o")]
    assert main([*base, "--games", "kuhn", "--trainers", "nope"]) == 2
    assert "unknown trainer 'nope'" in capsys.readouterr().err
    assert main([*base, "--games", "kuhnn", "--trainers", "cfr+"]) == 2
    assert "unknown game 'kuhnn'" in capsys.readouterr().err
    assert main([*base, "--games", "kuhn", "--trainers", "dcfr", "--param", "dcfr:delta=1"]) == 2
    assert "DiscountedCFR has no parameter 'delta'" in capsys.readouterr().err
    assert main(["sweep", "--games", "kuhn", "--trainers", "cfr+", "--output", str(tmp_path)]) == 2
    assert "needs a stopping rule" in capsys.readouterr().err
    assert main([*base, "--games", "kuhn", "--trainers", "cfr+", "--seeds", "3-1"]) == 2
    capsys.readouterr()
    for seeds in ("-1", "", "1,,2", "a-b"):
        assert main([*base, "--games", "kuhn", "--trainers", "cfr+", "--seeds", seeds]) == 2
        assert capsys.readouterr().err == (
            "cfrkit sweep: argument --seeds: expected seeds >= 0 or ranges like 0-4, separated by "
            f"commas, got {seeds!r}\n")
    # numbers no run can take are refused with the grid, as in Python
    for value, shown in (("nan", "nan"), ("1e400", "inf"), ("-inf", "-inf")):
        assert main([*base, "--games", "kuhn", "--trainers", "dcfr",
                     "--param", f"dcfr:alpha=1,{value}"]) == 2
        assert capsys.readouterr().err == (
            "cfrkit: params['dcfr']['alpha']: values must be finite numbers, bools, strings or "
            f"None, got {shown}\n")
    # the plot's format is checked before the runs, not after them
    pytest.importorskip("matplotlib")
    assert main([*base, "--games", "kuhn", "--trainers", "cfr+", "--plot", "pe.txt"]) == 2
    assert "--plot pe.txt: matplotlib cannot write .txt files" in capsys.readouterr().err
    # an output below a file
    (tmp_path / "afile").write_text("")
    for output in (f"{tmp_path}/afile/", f"{tmp_path}/afile/sub"):
        assert main([*base[:-1], output, "--games", "kuhn", "--trainers", "cfr+"]) == 2
        assert capsys.readouterr().err == (
            f"cfrkit: output {output}: {tmp_path}/afile is a file, not a folder\n")
    assert not (tmp_path / "o.csv").exists()


def test_cli_sweep_without_a_cluster_at_the_address(tmp_path, capsys, monkeypatch):
    # what ray.init(address="auto") raises when no cluster runs here
    def no_cluster(**options):
        raise ConnectionError("Could not find any running Ray instance. Please specify the one "
                              "to connect to by setting `--address` flag or `RAY_ADDRESS` "
                              "environment variable.")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", no_cluster)
    assert main(["sweep", "--games", "kuhn", "--trainers", "cfr+", "--max-iterations", "5",
                 "--output", str(tmp_path / "o"), "--address", "auto"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cfrkit: --address auto: Could not find any running Ray instance.")
    assert len(err.splitlines()) == 1


def _free_port() -> int:
    """A port of this machine nothing listens on: the system's pick, closed again."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_address_with_nothing_there_fails_before_ray_init(tmp_path, capsys, monkeypatch):
    # ray.init(address="HOST:PORT") retries an address where nothing listens for minutes,
    # silently; the sweep tries a connection first. ray.init is a stand-in that fails the
    # test at once if it is reached, rather than hang it
    called = []

    def init(*args, **options):
        called.append(options.get("address"))
        raise RuntimeError("ray.init was called")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    address = f"127.0.0.1:{_free_port()}"
    grid = dict(games="kuhn", trainers="cfr+", max_iterations=5, output=tmp_path / "o")
    with pytest.raises(ConnectionError) as info:
        cfrkit.sweep(**grid, address=address)
    message = str(info.value)
    assert message == (f"no Ray cluster at {address} (Connection refused): start Ray there "
                       f"(ray start --head --port={address.split(':')[1]} on that machine) or "
                       "give the address of a running cluster's head node")
    # the command line: that line, status 2, nothing written
    assert main(["sweep", "--games", "kuhn", "--trainers", "cfr+", "--max-iterations", "5",
                 "--output", str(tmp_path / "o"), "--address", address]) == 2
    assert capsys.readouterr().err == f"cfrkit: --address {address}: {message}\n"
    # the cluster Ray would use without address=: the same check
    monkeypatch.setenv("RAY_ADDRESS", address)
    with pytest.raises(ConnectionError, match=f"^no Ray cluster at {address} "):
        cfrkit.sweep(**grid)
    monkeypatch.delenv("RAY_ADDRESS")
    assert called == [] and os.listdir(tmp_path) == []
    # where something listens, ray.init gets the address as given; auto and ray:// are Ray's
    # to check, as before
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        listening = f"127.0.0.1:{server.getsockname()[1]}"
        for given in (listening, "auto", f"ray://{address}"):
            with pytest.raises(RuntimeError, match="ray.init was called"):
                cfrkit.sweep(**grid, address=given)
    assert called == [listening, "auto", f"ray://{address}"]


def test_cli_list_syntax():
    assert _split_top_level("kuhn(players=3, max_bets=2),leduc, rps") == [
        "kuhn(players=3, max_bets=2)", "leduc", "rps"]
    assert _seeds("0-2,7,10-11") == [0, 1, 2, 7, 10, 11]
    assert _seeds(" 3 - 4 , 0") == [3, 4, 0]


def test_equal_parameter_values_are_one_run():
    # 2 and 2.0 (as the command line and Python write them) are one id, in a rule's dict too
    from cfrkit.sweeps import _run_id, _setting_label

    def run_id(params):
        return _run_id(dict(game="kuhn", trainer="dcfr", params=params, seed=None,
                            target_nash_conv=None, max_iterations=100, time_limit=None))

    assert run_id({"alpha": 2}) == run_id({"alpha": 2.0}) == run_id({"alpha": np.float64(2)})
    rule = {"alpha": 1.5, "beta": 0}
    assert run_id({"rule": rule}) == run_id({"rule": dict(rule, beta=0.0)})
    assert run_id({"alpha": 2}) != run_id({"alpha": 2.5}) != run_id({"alpha": True})
    # ids without an integral float are those every earlier version gave, so outputs resume
    assert run_id({"alpha": 2}) == "c541db0ba187537a"
    assert run_id({"alpha": 1.5, "gamma": 2}) == "482780f719f49ef7"
    assert _setting_label("dcfr", '{"alpha": 2.0}') == _setting_label("dcfr", '{"alpha": 2}') \
        == "dcfr alpha=2"
    assert _setting_label("pruned", '{"rule": {"alpha": 1.0, "beta": 0.5}}') == \
        "pruned rule=(alpha=1,beta=0.5)"


def test_every_cfr_trainer_of_a_run_gets_the_cores_reserved_for_it():
    # a run's passes and NashConv checks stay on the CPUs Ray reserved for it, not all of the
    # machine's, which the other runs are using (the pruned pass is serial; its checks are not)
    from cfrkit.sweeps import _trainer

    compiled = cfrkit.compile_game(KuhnPoker())
    for name in ("vanilla", "cfr+", "pruned", "chance-sampled", "external-sampling"):
        task = dict(trainer=name, params={}, seed=0, threads=1)
        assert _trainer(compiled, task).threads == 1, name


# -- the Python API on the module's Ray ------------------------------------------------------------


def test_grid_runs_as_in_this_process(tmp_path, local_ray):
    table = cfrkit.sweep(["kuhn", "rps"], ["cfr+", "chance-sampled"], seeds=[0, 1],
                         max_iterations=200, output=tmp_path / "grid")
    assert table.column_names == [name for name, _, _ in SWEEP_COLUMNS]
    runs = _runs(table)
    # per game: cfr+ once (deterministic: no seed), chance sampling once per seed; grid order
    assert [(r["game"], r["trainer"], r["seed"]) for r in runs] == [
        ("kuhn", "cfr+", None), ("kuhn", "chance-sampled", 0), ("kuhn", "chance-sampled", 1),
        ("rps", "cfr+", None), ("rps", "chance-sampled", 0), ("rps", "chance-sampled", 1),
    ]
    assert len({r["run_id"] for r in runs}) == 6
    total = 0
    for run in runs:
        game = GAMES[run["game"]]()
        trainer = (cfrkit.CFRPlus(game) if run["trainer"] == "cfr+"
                   else cfrkit.ChanceSampledCFR(game, seed=run["seed"]))
        record = trainer.solve(max_iterations=200)
        rows = table.filter(pa.compute.equal(table["run_id"], run["run_id"])).to_pylist()
        # the whole convergence record, exactly: the same kernels, the same seeds
        assert [r["point"] for r in rows] == list(range(len(record.iterations)))
        assert [r["iteration"] for r in rows] == record.iterations.tolist()
        assert [r["nash_conv"] for r in rows] == record.nash_conv.tolist()
        assert [r["exploitability"] for r in rows] == record.exploitability.tolist()
        assert [r["last"] for r in rows] == [False] * (len(rows) - 1) + [True]
        assert run["status"] == "ok" and run["error"] is None and run["stopped"] == "max_iterations"
        assert run["final_iteration"] == 200 and run["max_iterations"] == 200
        assert run["final_nash_conv"] == record.nash_conv[-1]
        assert run["nodes_touched"] == trainer.nodes_touched
        assert run["final_seconds"] == rows[-1]["seconds"] > 0
        assert run["params"] == "{}" and run["target_nash_conv"] is None
        total += len(rows)
    assert table.num_rows == total
    # both files hold the returned table, the CSV to the last bit of every float
    assert cfrkit.load_sweep(tmp_path / "grid.parquet").equals(table)
    assert cfrkit.load_sweep(tmp_path / "grid.csv").equals(table)
    assert cfrkit.load_sweep(tmp_path / "grid").equals(table)

    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from cfrkit.plot import sweep as plot_sweep

    fig = plot_sweep(table)
    assert len(fig.axes) == 4  # kuhn and rps, iterations and seconds
    kuhn = fig.axes[0]
    assert kuhn.get_title() == "kuhn: NashConv vs iterations"
    labels = [line.get_label() for line in kuhn.get_lines() if not line.get_label().startswith("_")]
    assert labels == ["cfr+", "chance-sampled (2 seeds: median, range)"]
    cfr_plus = next(line for line in kuhn.get_lines() if line.get_label() == "cfr+")
    kuhn_cfr = [r for r in table.to_pylist()
                if r["game"] == "kuhn" and r["trainer"] == "cfr+" and r["iteration"] > 0]
    assert cfr_plus.get_xdata().tolist() == [r["iteration"] for r in kuhn_cfr]
    assert cfr_plus.get_ydata().tolist() == [r["nash_conv"] for r in kuhn_cfr]
    # the median of two seeds, on the log scale, is the midpoint of their curves
    median = next(line for line in kuhn.get_lines() if line.get_label().startswith("chance"))
    seeds = [line for line in kuhn.get_lines() if line.get_label().startswith("_")
             and line.get_alpha() == 0.3]
    xs, ys = median.get_xdata(), median.get_ydata()
    logs = [np.interp(np.log(xs), np.log(s.get_xdata()), np.log(s.get_ydata())) for s in seeds]
    assert len(seeds) == 2
    np.testing.assert_allclose(np.log(ys), (logs[0] + logs[1]) / 2, rtol=1e-12, atol=1e-12)


def test_failures_are_rows_and_resume_skips_finished_runs(tmp_path, local_ray):
    grid = dict(params={"outcome-sampling": {"exploration": [0.5, 2.0]}}, max_iterations=50,
                output=tmp_path)
    first = cfrkit.sweep("kuhn", "outcome-sampling", seeds=[3], **grid)
    ok, bad = _runs(first)
    assert json.loads(ok["params"]) == {"exploration": 0.5} and ok["status"] == "ok"
    expected = cfrkit.OutcomeSamplingCFR(KuhnPoker(), exploration=0.5, seed=3)
    assert ok["final_nash_conv"] == expected.solve(max_iterations=50).nash_conv[-1]
    # the trainer refused the value in the worker: one row with the error, no checks
    assert bad["status"] == "error" and bad["point"] is None and bad["nash_conv"] is None
    assert bad["error"] == "ValueError: exploration must be a number in (0, 1], got 2.0"
    assert first.num_rows == len(first.filter(pa.compute.equal(first["status"], "ok"))) + 1

    # again, with one more seed: the finished run is not run again (its row is the same, to
    # the millisecond it finished), the failed one is, and the new seed's runs are added
    second = cfrkit.sweep("kuhn", "outcome-sampling", seeds=[3, 4], **grid)
    runs = {(json.loads(r["params"])["exploration"], r["seed"]): r for r in _runs(second)}
    assert sorted(runs) == [(0.5, 3), (0.5, 4), (2.0, 3), (2.0, 4)]
    assert runs[0.5, 3] == ok
    assert runs[2.0, 3]["status"] == "error" and runs[2.0, 3]["finished_at"] > bad["finished_at"]
    assert runs[0.5, 4]["status"] == "ok" and runs[0.5, 4]["finished_at"] > ok["finished_at"]
    assert cfrkit.load_sweep(tmp_path).equals(second)

    # a sweep of another grid into the same output keeps these rows and returns its own
    third = cfrkit.sweep("rps", "vanilla", max_iterations=10, output=tmp_path)
    assert {r["game"] for r in _runs(third)} == {"rps"}
    stored = cfrkit.load_sweep(tmp_path / "results.csv")
    assert len(_runs(stored)) == 5
    assert stored.slice(0, second.num_rows).equals(second)
    # all done: nothing runs again, the same rows come back
    assert cfrkit.sweep("rps", "vanilla", max_iterations=10, output=tmp_path).equals(third)


def test_a_run_whose_rows_were_cut_short_runs_again(tmp_path, local_ray):
    # a CSV that lost its end holds a run's first checks only: not done, so it runs again
    first = cfrkit.sweep("kuhn", ["cfr+", "dcfr"], max_iterations=40, output=tmp_path / "r.csv")
    runs = _runs(first)
    cut = first.num_rows - 1  # the dcfr run's last row (grid order) is lost
    assert first["trainer"][cut].as_py() == "dcfr" and first["last"][cut].as_py()
    lines = (tmp_path / "r.csv").read_text().splitlines(keepends=True)
    (tmp_path / "r.csv").write_text("".join(lines[:-1]))
    (tmp_path / "r.parquet").unlink()
    second = cfrkit.sweep("kuhn", ["cfr+", "dcfr"], max_iterations=40, output=tmp_path / "r.csv")
    again = {r["trainer"]: r for r in _runs(second)}
    assert again["cfr+"] == runs[0]  # kept as it was
    assert again["dcfr"]["finished_at"] > runs[1]["finished_at"]  # run again, whole
    assert again["dcfr"]["final_nash_conv"] == runs[1]["final_nash_conv"]
    assert second.num_rows == first.num_rows


def test_a_csv_cut_in_the_middle_of_a_row_loses_that_row_only(tmp_path, local_ray):
    # a crash while the CSV was written leaves part of a row at its end: the rows before it
    # are read, and the run it belonged to is incomplete, so a resumed sweep runs it again
    grid = dict(games="kuhn", trainers=["cfr+", "dcfr"], max_iterations=30,
                output=tmp_path / "r.csv")
    first = cfrkit.sweep(**grid)
    (tmp_path / "r.parquet").unlink()
    whole = (tmp_path / "r.csv").read_bytes()
    header, *rows, end = whole.split(b"\n")
    assert end == b"" and len(rows) == first.num_rows
    kept = first.num_rows - 2  # the dcfr run keeps its first check, loses the rest
    assert first["trainer"][kept - 1].as_py() == "dcfr" and not first["last"][kept - 1].as_py()
    head = b"\n".join([header, *rows[:kept]]) + b"\n"
    # cut in a field in the middle, and in the row's last field (all 26 columns there, the
    # exploitability's last digits lost: read as it is, it would be a wrong number)
    for cut in (rows[kept][: len(rows[kept]) // 2], rows[kept][:-3]):
        (tmp_path / "r.csv").write_bytes(head + cut)
        assert cfrkit.load_sweep(tmp_path / "r.csv").equals(first.slice(0, kept))

    second = cfrkit.sweep(**grid)
    assert _runs(second)[0] == _runs(first)[0]  # cfr+ was whole: not run again
    assert _runs(second)[1]["finished_at"] > _runs(first)[1]["finished_at"]
    # the dcfr run again, whole: the table is the uncut sweep's, but for the clock
    clock = ["final_seconds", "finished_at", "seconds", "training_seconds"]
    assert second.drop_columns(clock).equals(first.drop_columns(clock))
    assert second["nash_conv"].to_pylist() == first["nash_conv"].to_pylist()
    assert cfrkit.load_sweep(tmp_path / "r.csv").equals(second)

    # a bad row anywhere but at the end is not a cut: the file is refused
    for ending in (b"\n", b"\n" + rows[-1][:10]):
        (tmp_path / "r.csv").write_bytes(head + b'"x","y","z"\n' + rows[kept] + ending)
        with pytest.raises(ValueError, match=r"r\.csv is not a cfrkit sweep table: CSV parse "
                                             r"error: Expected 26 columns, got 3"):
            cfrkit.load_sweep(tmp_path / "r.csv")


def test_a_csv_cut_inside_an_error_of_several_lines(tmp_path):
    # an error message may hold newlines (inside its quoted field): a cut just after one
    # leaves a file that ends with a newline but in the middle of a row. Over 1 MiB, the
    # reader splits the file into blocks, which must not split such a row either
    pytest.importorskip("pyarrow.csv")  # (loaded by a sweep, when the module runs whole)
    error = 'ValueError: line one\nline "two"\n' + "x" * 400
    rows = [row for i in range(3000) for row in cfrkit.sweeps._error_rows(
        dict(run_id=f"{i:016x}", game="kuhn", trainer="cfr+", params={}, seed=None,
             target_nash_conv=None, max_iterations=5, time_limit=None), error)]
    table = pa.Table.from_pylist(rows, schema=cfrkit.sweeps._schema())
    pa.csv.write_csv(table, tmp_path / "e.csv")
    whole = (tmp_path / "e.csv").read_bytes()
    assert len(whole) > 2**20 and whole.count(b"\n") == 1 + 3 * len(rows)  # 2 in each error
    assert cfrkit.load_sweep(tmp_path / "e.csv").equals(table)
    last = whole.rindex(b"ValueError: line one\n")
    for cut in (last + len("ValueError: line one\n"), last + len("ValueError: line one\nline ")):
        (tmp_path / "e.csv").write_bytes(whole[:cut])
        assert cfrkit.load_sweep(tmp_path / "e.csv").equals(table.slice(0, len(rows) - 1))


def test_a_table_that_cannot_be_written_warns_and_is_returned(tmp_path, local_ray, monkeypatch,
                                                               capsys):
    with pytest.raises(ValueError, match=r"^output /proc/results: cannot write in /proc \("):
        cfrkit.sweep("kuhn", "cfr+", max_iterations=5, output="/proc/results")

    def full(table, where, **options):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pa.parquet, "write_table", full)
    monkeypatch.setattr(cfrkit.sweeps, "_FLUSH_SECONDS", 0.0)  # a write after every run
    with pytest.warns(cfrkit.sweeps.TableNotWrittenWarning) as warned:
        table = cfrkit.sweep("kuhn", ["cfr+", "dcfr"], max_iterations=20, output=tmp_path / "r")
    whens = [w.message.when for w in warned
             if w.category is cfrkit.sweeps.TableNotWrittenWarning]
    assert whens == ["after 1 run (the sweep goes on)", "after 2 runs (the sweep goes on)",
                     "at the end"]
    assert str(warned[-1].message) == ("the sweep table was not written at the end: [Errno 28] "
                                       f"No space left on device: '{tmp_path / 'r.parquet'}'")
    assert [r["final_iteration"] for r in _runs(table)] == [20, 20]
    assert os.listdir(tmp_path) == []
    # the command line: the summary, a line per failed write, status 1
    status = main(["sweep", "--games", "kuhn", "--trainers", "cfr+", "--max-iterations", "20",
                   "--output", str(tmp_path / "r"), "--quiet", "--plot", str(tmp_path / "p.png")])
    out, err = capsys.readouterr()
    assert status == 1 and "kuhn" in out and "table:" not in out
    # the plot is drawn from the table in memory: it was skipped, saying nothing
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")
    said = f"cfrkit: --output {tmp_path / 'r'}: not written"
    assert err == (f"{said} after 1 run (the sweep goes on): No space left on device\n"
                   f"{said} at the end: No space left on device\n")


def test_a_shared_compiled_game_cache(tmp_path, local_ray):
    # the workers write the compiled game into cache_dir once; the results are those of a
    # sweep without the cache, and a second sweep (another output) finds the file as it was
    plain = cfrkit.sweep("kuhn(players=3)", "cfr+", max_iterations=30)
    cached = cfrkit.sweep("kuhn(players=3)", "cfr+", max_iterations=30,
                          cache_dir=tmp_path / "cache", output=tmp_path / "a")
    files = list((tmp_path / "cache").glob("*.npz"))
    assert len(files) == 1
    written = files[0].stat().st_mtime_ns
    assert cached["nash_conv"].to_pylist() == plain["nash_conv"].to_pylist()
    again = cfrkit.sweep("kuhn(players=3)", "cfr+", max_iterations=30,
                         cache_dir=tmp_path / "cache", output=tmp_path / "b")
    assert again["nash_conv"].to_pylist() == plain["nash_conv"].to_pylist()
    assert files[0].stat().st_mtime_ns == written
    with pytest.raises(ValueError, match="cache_dir must be a path"):
        cfrkit.sweep("kuhn", "cfr+", max_iterations=1, cache_dir=3)
    with pytest.raises(ValueError, match="cache_dir must name a directory, got ''"):
        cfrkit.sweep("kuhn", "cfr+", max_iterations=1, cache_dir="")  # not the current one


def test_ctrl_c_keeps_the_finished_runs(tmp_path, local_ray, monkeypatch):
    # rps is solved at the first check (CFR+ starts at its uniform equilibrium); Leduc would
    # take hours to reach NashConv 1e-12. Ctrl-C arrives once the rps run is in.
    finished = threading.Event()
    add = cfrkit.sweeps._Table.add

    def add_and_tell(self, run_id, rows):
        add(self, run_id, rows)
        finished.set()

    monkeypatch.setattr(cfrkit.sweeps._Table, "add", add_and_tell)

    def interrupt():
        if finished.wait(timeout=120):
            time.sleep(0.5)  # Leduc is running
            _thread.interrupt_main()

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        cfrkit.sweep(["rps", "leduc"], "cfr+", target_nash_conv=1e-12, max_iterations=10**9,
                     output=tmp_path)
    runs = _runs(cfrkit.load_sweep(tmp_path))
    assert [(r["game"], r["status"], r["stopped"]) for r in runs] == [("rps", "ok", "target")]
    assert _runs(cfrkit.load_sweep(tmp_path / "results.csv")) == runs
    # the Leduc task was cancelled, and Ray goes on: the next sweep resumes the same output
    again = cfrkit.sweep(["rps", "kuhn"], "cfr+", target_nash_conv=1e-12, max_iterations=20,
                         output=tmp_path)
    assert [(r["game"], r["stopped"]) for r in _runs(again)] == [
        ("rps", "target"), ("kuhn", "max_iterations")]


def _crash_on_rps(task):
    """A task whose worker process dies on rps (as one killed for memory would)."""
    if task["game"] == "rps":
        os._exit(3)
    from cfrkit.sweeps import _run_task  # the worker's own, unpatched

    return _run_task(task)


def test_a_worker_that_dies_is_an_error_row(tmp_path, local_ray, monkeypatch):
    # sent by value: the workers cannot import this test module
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.setattr(cfrkit.sweeps, "_run_task", _crash_on_rps)
    try:
        table = cfrkit.sweep(["rps", "kuhn"], "vanilla", max_iterations=20, output=tmp_path)
    finally:
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    rps, kuhn = _runs(table)
    assert rps["status"] == "error" and rps["point"] is None
    # Ray's first line, without the worker's traceback
    assert rps["error"].startswith("WorkerCrashedError: The worker died unexpectedly")
    assert "\n" not in rps["error"]
    assert kuhn["status"] == "ok" and kuhn["final_iteration"] == 20


def test_bad_grids_are_refused_before_anything_runs(tmp_path):
    limits = dict(max_iterations=5)
    (tmp_path / "afile").write_text("")
    cases = [
        (dict(games="chess", trainers="cfr+", **limits), "unknown game 'chess'"),
        (dict(games=KuhnPoker(), trainers="cfr+", **limits), "named as on the command line"),
        (dict(games="kuhn", trainers="cfr", **limits), "unknown trainer 'cfr'"),
        (dict(games="kuhn", trainers="dcfr", params={"dcfr": {"alpha": []}}, **limits),
         "params['dcfr']['alpha'] is empty"),
        (dict(games="kuhn", trainers="dcfr", params={"cfr+": {}}, **limits),
         "'cfr+' is not one of the trainers swept"),
        (dict(games="kuhn", trainers="vanilla", params={"vanilla": {"seed": 1}}, **limits),
         "VanillaCFR has no parameter 'seed'"),
        (dict(games="kuhn", trainers="pruned", params={"pruned": {"rule": "cfr++"}}, **limits),
         "unknown rule 'cfr++'"),
        (dict(games="kuhn", trainers="pruned", params={"pruned": {"rule": {"delta": 1}}}, **limits),
         "RegretRule has the fields"),
        (dict(games="kuhn", trainers="dcfr", params={"dcfr": {"alpha": [object()]}}, **limits),
         "values must be finite numbers"),
        (dict(games="kuhn", trainers="chance-sampled", seeds=[-1], **limits), "seeds must be"),
        (dict(games="kuhn", trainers="chance-sampled", seeds=[2**64], **limits),
         "seeds must be integers in [0, 2**64), got 18446744073709551616"),
        (dict(games="kuhn", trainers="cfr+"), "needs a stopping rule"),
        (dict(games="kuhn", trainers="cfr+", time_limit=10**400),
         "time_limit must be a positive number"),
        (dict(games="kuhn", trainers="cfr+", max_iterations=5, address="auto", num_cpus=2),
         "num_cpus applies to a local Ray instance only"),
        (dict(games="kuhn", trainers="cfr+", max_iterations=5,
              output=tmp_path / "missing" / "out"), "does not exist"),
        (dict(games="kuhn", trainers="cfr+", max_iterations=5, output=f"{tmp_path}/afile/"),
         f"afile/: {tmp_path}/afile is a file, not a folder"),
        (dict(games="kuhn", trainers="cfr+", max_iterations=5, output=tmp_path / "afile" / "x"),
         f"afile/x: {tmp_path}/afile is a file, not a folder"),
        (dict(games="kuhn(players=1000000)", trainers="cfr+", **limits),
         "players must be at most 6, got 1000000"),
        (dict(games="kuhn", trainers="cfr+", runtime_env=[1], **limits),
         "runtime_env must be a dict"),
        (dict(games="kuhn", trainers="cfr+", progress="no", **limits),  # would have shown it
         "progress must be a bool, got 'no'"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as info:
            cfrkit.sweep(**kwargs)
        assert message in str(info.value), (kwargs, str(info.value))


def test_a_missing_table_is_named_as_sweep_would_have_written_it(tmp_path):
    pytest.importorskip("pyarrow")
    with pytest.raises(FileNotFoundError, match=re.escape(f"{tmp_path}/gone/results.parquet")):
        cfrkit.load_sweep(f"{tmp_path}/gone/")  # a folder, as output="gone/" makes one
    with pytest.raises(FileNotFoundError, match=re.escape(f"{tmp_path}/gone.parquet")):
        cfrkit.load_sweep(tmp_path / "gone")


def test_an_output_that_is_not_a_sweep_is_refused(tmp_path):
    pytest.importorskip("pyarrow.csv")  # (loaded by a sweep, when the module runs whole)
    pa.csv.write_csv(pa.table({"a": [1]}), tmp_path / "other.csv")
    with pytest.raises(ValueError, match="not a cfrkit sweep table"):
        cfrkit.sweep("kuhn", "cfr+", max_iterations=5, output=tmp_path / "other")
    for name, junk in (("bytes.csv", bytes(range(256)) * 4), ("bytes.parquet", b"PAR1 junk")):
        (tmp_path / name).write_bytes(junk)
        with pytest.raises(ValueError) as info:  # not pyarrow's error, which names no file
            cfrkit.load_sweep(tmp_path / name)
        assert str(info.value).startswith(f"{tmp_path / name} is not a cfrkit sweep table: ")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ValueError, match="cache_dir .*afile is a file, not a folder"):
        cfrkit.sweep("kuhn", "cfr+", max_iterations=5, cache_dir=tmp_path / "afile")


def test_equal_values_resume_and_a_failed_plot_keeps_the_table(tmp_path, local_ray, capsys,
                                                               monkeypatch):
    # alpha=2 on the command line is the run Python made with alpha=2.0: not run again
    first = cfrkit.sweep("kuhn", "dcfr", params={"dcfr": {"alpha": 2.0}}, max_iterations=10,
                         output=tmp_path)
    assert main(["sweep", "--games", "kuhn", "--trainers", "dcfr", "--param", "dcfr:alpha=2",
                 "--max-iterations", "10", "--output", str(tmp_path)]) == 0
    assert "1 of 1 runs already in" in capsys.readouterr().err
    assert cfrkit.load_sweep(tmp_path).equals(first)
    # no run succeeds, so there is nothing to plot: one line, status 1, the table written
    monkeypatch.setenv("MPLBACKEND", "Agg")
    status = main(["sweep", "--games", "kuhn", "--trainers", "outcome-sampling", "--param",
                   "outcome-sampling:exploration=2.0", "--max-iterations", "10", "--output",
                   str(tmp_path / "failed"), "--plot", str(tmp_path / "pe.png"), "--quiet"])
    assert status == 1
    assert capsys.readouterr().err == (
        f"cfrkit: --plot {tmp_path / 'pe.png'}: not written: the table has no successful run "
        "to draw\n")
    (run,) = _runs(cfrkit.load_sweep(tmp_path / "failed.parquet"))
    assert run["status"] == "error" and not (tmp_path / "pe.png").exists()


DOCS = Path(__file__).resolve().parent.parent / "docs" / "sweeps.md"


def test_the_docs_examples_run(tmp_path, local_ray, monkeypatch):
    # docs/sweeps.md fences its Ray examples as ```py, so that tests/test_docs.py (which runs
    # the ```python blocks without Ray) leaves them to this module and its Ray session
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    blocks = re.findall(r"```py\n(.*?)```", DOCS.read_text(), re.S)
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        for index, block in enumerate(blocks):
            exec(compile(block, f"sweeps.md block {index}", "exec"), namespace)
    runs = _runs(namespace["table"])
    # per game: cfr+ once, dcfr for two alphas, chance sampling for three seeds
    assert len(runs) == 2 * (1 + 2 + 3) and all(r["status"] == "ok" for r in runs)
    assert {r["params"] for r in runs if r["trainer"] == "dcfr"} == {
        '{"alpha": 1.5, "gamma": 2}', '{"alpha": 2.0, "gamma": 2}'}
    assert "final_nash_conv" in out.getvalue()
    assert (tmp_path / "results" / "results.parquet").exists() and (tmp_path / "sweep.png").exists()


def test_the_docs_list_every_column():
    text = DOCS.read_text()
    table = text[text.index("| column | type | meaning |"):]
    for name, _, _ in SWEEP_COLUMNS:
        assert f"`{name}`" in table, name
