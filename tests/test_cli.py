"""The command line, driven as users drive it: subprocesses, exit codes, files, Ctrl-C."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import cfrkit
from cfrkit.games import KuhnPoker, LeducPoker

SCRIPT = shutil.which("cfrkit", path=str(Path(sys.executable).parent)) or shutil.which("cfrkit")


def run(*args: str, cwd: Path, module: bool = False, check_status: int | None = 0):
    """Run ``cfrkit ARGS`` (or ``python -m cfrkit ARGS``); return the completed process."""
    command = [sys.executable, "-m", "cfrkit", *args] if module else [SCRIPT, *args]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONUNBUFFERED="1"))
    if check_status is not None:
        assert done.returncode == check_status, (done.stdout, done.stderr)
    return done


@pytest.fixture(scope="module", autouse=True)
def _script_installed():
    if SCRIPT is None:
        pytest.skip("the cfrkit console script is not installed (pip install the package)")


def test_games_lists_the_builtins_and_openspiel(tmp_path):
    out = run("games", cwd=tmp_path).stdout
    for name in ("rps", "rpsls", "kuhn(players=<int>, max_bets=<int>, deal=<deck|independent>)",
                 "leduc", "openspiel:NAME"):
        assert name in out
    assert "cfr+" in out and "pdcfr+" in out


def test_solve_prints_and_writes_what_it_found(tmp_path):
    done = run("solve", "kuhn", "--trainer", "cfr+", "--target", "1e-4", "--json", "run.json",
               "--policy-out", "kuhn.json", cwd=tmp_path)
    result = json.loads((tmp_path / "run.json").read_text())
    assert result["game"] == "kuhn" and result["trainer"] == "CFRPlus"
    assert result["nash_conv"] <= 1e-4 and result["stopped"] == "target"
    assert result["exploitability"] == pytest.approx(result["nash_conv"] / 2)
    assert len(result["values"]) == 2 and result["values"][0] == pytest.approx(-1 / 18, abs=1e-3)
    assert result["iterations"] == result["history"]["iterations"][-1] > 0
    # seconds: the run itself (training and checks), not the kernels' loading before it
    assert result["seconds"] == result["history"]["seconds"][-1] >= result["training_seconds"] > 0
    # the policy file is the average policy of that run, and evaluates to the same NashConv
    policy = cfrkit.load_policy(tmp_path / "kuhn.json", KuhnPoker())
    assert cfrkit.nash_conv(KuhnPoker(), policy) == pytest.approx(result["nash_conv"], abs=1e-15)
    # stdout: the strategy table, then the evaluation
    assert "Qpb" in done.stdout and "player 1" in done.stdout
    assert f"NashConv            {result['nash_conv']:.6g}" in done.stdout
    assert "exploitability" in done.stdout
    evaluated = run("evaluate", "kuhn", "kuhn.json", cwd=tmp_path).stdout
    assert f"NashConv            {result['nash_conv']:.6g}" in evaluated


def test_python_m_cfrkit_is_the_same_program(tmp_path):
    run("solve", "rps", "--iterations", "300", "--json", "a.json", "--quiet", cwd=tmp_path)
    run("solve", "rps", "--iterations", "300", "--json", "b.json", "--quiet", cwd=tmp_path,
        module=True)
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    assert a["iterations"] == b["iterations"] == 300
    assert a["nash_conv"] == b["nash_conv"] and a["trainer"] == b["trainer"] == "DCFRPlus"


def test_three_players_have_no_exploitability(tmp_path):
    run("solve", "kuhn(players=3)", "--trainer", "dcfr+", "--iterations", "50", "--json", "r.json",
        "--quiet", cwd=tmp_path)
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["exploitability"] is None and len(result["values"]) == 3


def test_kuhn_variants_by_name(tmp_path):
    # the word parameter is written bare, or quoted as the game's repr writes it
    for spec in ("kuhn(max_bets=2,deal=independent)", "kuhn( deal='independent' , max_bets=2 )"):
        run("solve", spec, "--trainer", "cfr+", "--target", "1e-4", "--json", "r.json",
            "--policy-out", "p.json", "--quiet", cwd=tmp_path)
        result = json.loads((tmp_path / "r.json").read_text())
        assert result["game"] == spec and result["nash_conv"] <= 1e-4
        assert result["values"][0] == pytest.approx(-1 / 36, abs=1e-3)
        game = KuhnPoker(max_bets=2, deal="independent")
        policy = cfrkit.load_policy(tmp_path / "p.json", game)
        assert cfrkit.nash_conv(game, policy) == pytest.approx(result["nash_conv"], abs=1e-15)
    done = run("solve", 'kuhn(max_bets=2, deal="deck")', "--iterations", "10", cwd=tmp_path)
    assert "Jcr   player 0  fold:" in done.stdout
    assert "on KuhnPoker(players=2, max_bets=2):" in done.stdout


def test_resume_continues_bit_for_bit(tmp_path):
    run("solve", "kuhn", "--trainer", "chance-sampled", "--seed", "5", "--iterations", "3000",
        "--checkpoint", "straight.npz", "--quiet", cwd=tmp_path)
    run("solve", "kuhn", "--trainer", "chance-sampled", "--seed", "5", "--iterations", "1200",
        "--checkpoint", "half.npz", "--quiet", cwd=tmp_path)
    run("solve", "kuhn", "--resume", "half.npz", "--iterations", "1800", "--checkpoint",
        "half.npz", "--quiet", cwd=tmp_path)
    straight = cfrkit.load_trainer(tmp_path / "straight.npz", KuhnPoker())
    resumed = cfrkit.load_trainer(tmp_path / "half.npz", KuhnPoker())
    assert straight.iteration == resumed.iteration == 3000
    for name, a, b in zip(straight._state._fields, straight._state, resumed._state):
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    run("solve", "kuhn", "--iterations", "200", "--plot", "conv.png", "--quiet", cwd=tmp_path)
    assert (tmp_path / "conv.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # no check past iteration 0 (no iterations; the target met at once): the iterations panel
    # has no point a log axis can show, and the figure is written all the same
    for name, limit in (("i0.png", ["--iterations", "0"]), ("t0.png", ["--target", "10"])):
        run("solve", "kuhn", *limit, "--plot", name, "--quiet", cwd=tmp_path)
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_openspiel_games_by_name(tmp_path):
    pytest.importorskip("pyspiel")
    done = run("solve", "openspiel:kuhn_poker", "--trainer", "pcfr+", "--iterations", "100",
               "--quiet", "--json", "r.json", cwd=tmp_path)
    assert json.loads((tmp_path / "r.json").read_text())["nash_conv"] < 1e-3
    assert "player 0" in done.stdout
    # spaces around the name, as around a built-in game's
    spaced = run("solve", "openspiel: kuhn_poker ", "--trainer", "pcfr+", "--iterations", "100",
                 "--quiet", cwd=tmp_path)
    untimed = [[line for line in out.splitlines() if " iterations (" not in line]
               for out in (done.stdout, spaced.stdout)]
    assert untimed[0] == untimed[1] and "player 0" in spaced.stdout


def test_cache_dir_compiles_once_and_loads_after(tmp_path):
    # the first run writes the compiled game; the second loads it (the file is not rewritten)
    # and gives the same results to the last digit
    first = run("solve", "kuhn(players=3)", "--iterations", "50", "--quiet", "--json", "a.json",
                "--cache-dir", "cache", cwd=tmp_path)
    files = list((tmp_path / "cache").glob("*.npz"))
    assert len(files) == 1 and "KuhnPoker" in files[0].name
    written = files[0].stat().st_mtime_ns
    second = run("solve", "kuhn(players=3)", "--iterations", "50", "--quiet", "--json", "b.json",
                 "--cache-dir", "cache", cwd=tmp_path)
    assert files[0].stat().st_mtime_ns == written
    assert list((tmp_path / "cache").glob("*.npz")) == files
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    for field in ("nash_conv", "values", "player_improvements"):
        assert a[field] == b[field]
    table = first.stdout.split("\n\n")[0]  # the strategy, before the timed summary
    assert table and second.stdout.startswith(table)
    # evaluate reads the same cache, and says what it says without it
    run("solve", "kuhn(players=3)", "--iterations", "50", "--quiet", "--policy-out", "p.json",
        cwd=tmp_path)
    shown = run("evaluate", "kuhn(players=3)", "p.json", "--cache-dir", "cache", cwd=tmp_path)
    assert shown.stdout == run("evaluate", "kuhn(players=3)", "p.json", cwd=tmp_path).stdout
    assert files[0].stat().st_mtime_ns == written


def test_threads_option(tmp_path):
    # same results on 1 thread as on all; refused where it does nothing or asks too much
    run("solve", "kuhn(players=5)", "--trainer", "cfr+", "--iterations", "3", "--quiet",
        "--json", "all.json", "--policy-out", "p.json", cwd=tmp_path)
    run("solve", "kuhn(players=5)", "--trainer", "cfr+", "--iterations", "3", "--quiet",
        "--json", "one.json", "--threads", "1", cwd=tmp_path)
    one, every = (json.loads((tmp_path / f).read_text()) for f in ("one.json", "all.json"))
    assert one["nash_conv"] == every["nash_conv"] and one["values"] == every["values"]
    shown = run("evaluate", "kuhn(players=5)", "p.json", "--threads", "1", cwd=tmp_path).stdout
    assert shown == run("evaluate", "kuhn(players=5)", "p.json", cwd=tmp_path).stdout
    # a pruned pass runs on one thread; --threads sets its evaluations'
    pruned = run("solve", "kuhn", "--trainer", "pruned", "--threads", "1", "--iterations", "3",
                 "--quiet", "--json", "pruned.json", cwd=tmp_path)
    assert pruned.stderr == "" and json.loads((tmp_path / "pruned.json").read_text())["iterations"] == 3
    many = run("solve", "kuhn", "--threads", "100000", cwd=tmp_path, check_status=2)
    assert "--threads" in many.stderr and len(many.stderr.strip().splitlines()) == 1
    run("solve", "kuhn", "--threads", "0", cwd=tmp_path, check_status=2)
    # a usage error prints nothing else (evaluate printed its header first)
    bad = run("evaluate", "kuhn(players=5)", "p.json", "--threads", "100000", cwd=tmp_path,
              check_status=2)
    assert bad.stdout == "" and bad.stderr.splitlines()[-1].startswith("cfrkit: --threads: ")
    # a negative count names the same bound as 0 does
    negative = run("solve", "kuhn", "--threads", "-1", cwd=tmp_path, check_status=2)
    assert "expected a number >= 1, got '-1'" in negative.stderr


def test_an_output_naming_where_standard_output_goes_is_refused(tmp_path):
    # written aside and renamed into place, it replaced the file the report went to (or, on a
    # pipe, failed after the run)
    with open(tmp_path / "report.txt", "w") as report:
        done = subprocess.run([SCRIPT, "solve", "kuhn", "--quiet", "--json", "/dev/stdout"],
                              cwd=tmp_path, stdout=report, stderr=subprocess.PIPE, text=True,
                              timeout=300)
    assert done.returncode == 2 and (tmp_path / "report.txt").read_text() == ""
    assert done.stderr == ("cfrkit: --json /dev/stdout: is where standard output goes, which the "
                           "report would overwrite\n")
    piped = run("solve", "kuhn", "--quiet", "--policy-out", "/dev/stdout", cwd=tmp_path,
                check_status=2)
    assert piped.stderr == "cfrkit: --policy-out /dev/stdout: not a regular file\n"


def test_cache_dir_with_an_openspiel_game(tmp_path):
    pytest.importorskip("pyspiel")
    for name in ("a.json", "b.json"):
        run("solve", "openspiel:kuhn_poker", "--iterations", "20", "--quiet", "--json", name,
            "--cache-dir", "cache", cwd=tmp_path)
    assert len(list((tmp_path / "cache").glob("*.npz"))) == 1
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    assert a["nash_conv"] == b["nash_conv"]


def test_a_big_openspiel_game_reports_its_compile_on_stderr(tmp_path):
    # liar's dice has 294,883 histories, past the 10^5 from which the walk shows progress;
    # OpenSpiel's own stderr is silenced while it loads the game, but not during the walk
    pytest.importorskip("pyspiel")
    done = run("solve", "openspiel:liars_dice", "--iterations", "1", cwd=tmp_path)
    assert "compiling from_openspiel('liars_dice()')" in done.stderr
    assert "295k nodes" in done.stderr
    quiet = run("solve", "openspiel:liars_dice", "--iterations", "1", "--quiet", cwd=tmp_path)
    assert quiet.stderr == ""


@pytest.mark.parametrize(
    "args, message",
    [
        (["solve", "nosuch"], "unknown game 'nosuch'"),
        (["solve", "kuhn(players=x)"], "players must be int"),
        (["solve", "kuhn(cards=3)"], "bad parameter 'cards=3'"),
        (["solve", "kuhn(deal=shoe)"], "deal must be 'deck' or 'independent', got 'shoe'"),
        (["solve", "kuhn(max_bets=0)"], "max_bets must be an int >= 1, got 0"),
        (["solve", "kuhn(players=3, deal=independent)"], "players must be 2 when max_bets > 1"),
        (["solve", "kuhn((("], "malformed game"),
        (["solve", "kuhn", "--trainer", "nonsense"], "invalid choice: 'nonsense'"),
        (["solve", "kuhn", "--iterations", "-5"], "expected a number >= 0, got '-5'"),
        (["solve", "kuhn", "--target", "0"], "expected a positive number"),
        (["solve", "kuhn", "--bogus"], "unrecognized arguments: --bogus"),
        (["solve", "kuhn", "--resume", "missing.npz"], "missing.npz: no such file"),
        (["solve", "kuhn", "--seed", "3"], "--seed applies to the sampled trainers only (chance-sampled, external-sampling, outcome-sampling)"),
        (["solve", "kuhn", "--json", "no/such/folder/r.json"], "does not exist"),
        (["evaluate", "kuhn", "p.json", "--cache-dir", ""], "--cache-dir: an empty name"),
        # the second write would replace the first
        (["solve", "kuhn", "--policy-out", "a.json", "--json", "./a.json"],
         "--policy-out and --json name the same file ./a.json"),
        (["solve", "kuhn", "--checkpoint", "out", "--plot", "out"],
         "--checkpoint and --plot name the same file out"),
        # every output is checked before training, not written (and lost) after it
        (["solve", "kuhn", "--checkpoint", "."], "--checkpoint .: is a directory, not a file"),
        (["solve", "kuhn", "--policy-out", "sub/"], "--policy-out 'sub/': needs a file name"),
        (["solve", "kuhn", "--json", ".."], "--json ..: is a directory, not a file"),
        (["solve", "kuhn", "--json", "/proc/r.json"], "--json /proc/r.json: cannot write in /proc"),
        (["solve", "kuhn", "--plot", "conv.txt"], "--plot conv.txt: matplotlib cannot write .txt"),
        (["solve", "kuhn(players=40)"], "players must be at most 6, got 40: the game has more than"),
        (["solve", "kuhn(players=3,players=4)"], "game 'kuhn': players given twice"),
        (["evaluate", "kuhn", "missing.json"], "missing.json"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        ([], "the following arguments are required"),
    ],
)
def test_bad_usage_is_one_line_and_status_2(tmp_path, args, message):
    if "/proc/r.json" in args and not os.path.isdir("/proc"):
        pytest.skip("no /proc here")
    if "--plot" in args:
        pytest.importorskip("matplotlib")
    done = run(*args, cwd=tmp_path, check_status=2)
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_an_output_under_a_file_is_refused(tmp_path):
    (tmp_path / "afile").write_text("")
    afile = tmp_path / "afile"
    for path in ("afile/r.json", "afile/sub/r.json"):
        done = run("solve", "kuhn", "--json", path, cwd=tmp_path, check_status=2)
        assert done.stderr == f"cfrkit: --json {path}: {afile} is a file, not a folder\n"
    for game in ("kuhn", "openspiel:kuhn_poker"):  # a cache folder too, before any walk
        done = run("solve", game, "--cache-dir", "afile", cwd=tmp_path, check_status=2)
        assert done.stderr == f"cfrkit: --cache-dir afile: {afile} is a file, not a folder\n"


def test_a_game_that_does_not_compile_is_one_line(monkeypatch, tmp_path, capsys):
    # solve and evaluate share the handling (a game too big for ulimit -v stops compile_game)
    import cfrkit.cli
    from cfrkit.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["solve", "kuhn", "--iterations", "5", "--quiet", "--policy-out", "p.json"]) == 0

    def too_big(game, **options):
        raise cfrkit.GameError(f"{game!r}: compiling stopped at 3,923,969 nodes")

    monkeypatch.setattr(cfrkit.cli, "compile_game", too_big)
    capsys.readouterr()
    for args in (["solve", "kuhn"], ["evaluate", "kuhn", "p.json"]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err == ("cfrkit: game 'kuhn': KuhnPoker(players=2): compiling stopped at "
                       "3,923,969 nodes\n")


def test_an_output_that_fails_after_training_spares_the_others(monkeypatch, tmp_path, capsys):
    # the disk fills up while training: the failed output is one line, the checkpoint and the
    # others are written, and the status says something is missing
    from cfrkit.cli import main

    def full(self, path):
        raise OSError(28, "No space left on device")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cfrkit.Policy, "save", full)
    status = main(["solve", "kuhn", "--iterations", "20", "--quiet", "--checkpoint", "k.npz",
                   "--policy-out", "p.json", "--json", "r.json"])
    assert status == 1
    assert capsys.readouterr().err == (
        "cfrkit: --policy-out p.json: not written: No space left on device\n")
    assert json.loads((tmp_path / "r.json").read_text())["iterations"] == 20
    assert cfrkit.load_trainer(tmp_path / "k.npz", KuhnPoker()).iteration == 20
    assert not (tmp_path / "p.json").exists()


@pytest.mark.parametrize(
    "failure, said",
    [
        # the disk is full: one line for the checkpoint, one for the interrupt
        (OSError(28, "No space left on device"),
         "cfrkit: --checkpoint k.npz: not written: No space left on device\n"
         "cfrkit: interrupted at iteration 0\n"),
        # a second Ctrl-C stops the saving: which checkpoint the file holds
        (KeyboardInterrupt(),
         "cfrkit: interrupted at iteration 0; saving stopped by a second Ctrl-C: k.npz holds "
         "the last checkpoint written, if any\n"),
    ],
)
def test_a_checkpoint_that_fails_on_ctrl_c_is_said(monkeypatch, tmp_path, capsys, failure, said):
    from cfrkit.cli import main
    from cfrkit.trainers.base import Trainer

    def interrupted(self, **limits):
        raise KeyboardInterrupt

    def fails(self, path):
        raise failure

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Trainer, "solve", interrupted)
    monkeypatch.setattr(Trainer, "save", fails)
    assert main(["solve", "kuhn", "--quiet", "--checkpoint", "k.npz"]) == 130
    assert capsys.readouterr().err == said


def test_a_checkpoint_for_another_game_is_refused(tmp_path):
    run("solve", "kuhn", "--iterations", "10", "--checkpoint", "k.npz", "--quiet", cwd=tmp_path)
    done = run("solve", "leduc", "--resume", "k.npz", cwd=tmp_path, check_status=2)
    assert "k.npz: made for another game" in done.stderr


def test_a_learners_checkpoint_is_refused_in_one_line(tmp_path):
    cfrkit.ResultTableLearner(KuhnPoker(), seed=1).iterate(10).save(tmp_path / "l.npz")
    for extra in ([], ["--iterations", "5"], ["--threads", "1"]):
        done = run("solve", "kuhn", "--resume", "l.npz", *extra, cwd=tmp_path, check_status=2)
        assert done.stderr == ("cfrkit: --resume l.npz holds a ResultTableLearner; cfrkit solve "
                               "runs the CFR trainers (resume it in Python: load_trainer)\n")


def test_a_reader_that_leaves_early_costs_no_file(tmp_path):
    # | head: the reader has gone before the strategy table is printed
    command = [SCRIPT, "solve", "leduc", "--iterations", "20", "--policy-out", "p.json",
               "--json", "r.json", "--checkpoint", "c.npz", "--quiet"]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    process.stdout.close()
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0 and stderr == b""
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["iterations"] == 20 and result["seed"] is None
    policy = cfrkit.load_policy(tmp_path / "p.json", LeducPoker())
    assert cfrkit.nash_conv(LeducPoker(), policy) == pytest.approx(result["nash_conv"], abs=1e-12)
    assert cfrkit.load_trainer(tmp_path / "c.npz", LeducPoker()).iteration == 20


def test_a_sampled_run_says_its_seed_which_runs_it_again(tmp_path):
    first = run("solve", "kuhn", "--trainer", "outcome-sampling", "--iterations", "300",
                "--json", "a.json", "--quiet", cwd=tmp_path)
    seed = json.loads((tmp_path / "a.json").read_text())["seed"]
    assert type(seed) is int and f", seed {seed}\n" in first.stdout
    again = run("solve", "kuhn", "--trainer", "outcome-sampling", "--iterations", "300",
                "--seed", str(seed), "--json", "b.json", "--quiet", cwd=tmp_path)
    assert f", seed {seed}\n" in again.stdout
    a, b = (json.loads((tmp_path / name).read_text()) for name in ("a.json", "b.json"))
    assert a["nash_conv"] == b["nash_conv"] and a["values"] == b["values"]


def test_ctrl_c_writes_the_checkpoint_and_exits_130(tmp_path):
    process = subprocess.Popen(
        [SCRIPT, "solve", "leduc", "--trainer", "vanilla", "--iterations", "100000000",
         "--checkpoint", "stopped.npz"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    try:
        line = process.stderr.readline()  # "cfrkit: solving ..." once training begins
        assert "solving" in line, line
        # long enough for some iterations even on a loaded machine (the kernels may still be
        # loading from numba's cache when the line appears)
        time.sleep(1.5)
        process.send_signal(signal.SIGINT)
        sent = time.perf_counter()
        process.wait(timeout=60)
        # exits promptly: the running block (~10 ms) ends and the checkpoint is written; the
        # bound is loose because a shared machine can stall any process for seconds
        assert time.perf_counter() - sent < 15
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    rest = process.stderr.read()
    assert "checkpoint written to stopped.npz" in rest and "Traceback" not in rest
    trainer = cfrkit.load_trainer(tmp_path / "stopped.npz", LeducPoker())
    assert trainer.iteration > 0
    fresh = cfrkit.VanillaCFR(LeducPoker()).iterate(trainer.iteration)
    np.testing.assert_array_equal(trainer._state.regret, fresh._state.regret)


def test_quiet_called_from_python_leaves_the_environment_as_it_was(monkeypatch, tmp_path):
    # --quiet sets CFRKIT_QUIET for the command only: a main() called in a notebook must not
    # silence the compile notices and progress bars of everything after it
    from cfrkit.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CFRKIT_QUIET", raising=False)
    assert main(["solve", "kuhn", "--iterations", "5", "--quiet"]) == 0
    assert "CFRKIT_QUIET" not in os.environ
    monkeypatch.setenv("CFRKIT_QUIET", "yes")
    assert main(["solve", "kuhn", "--iterations", "5", "--quiet"]) == 0
    assert os.environ["CFRKIT_QUIET"] == "yes"


def test_a_json_or_plot_that_fails_midway_keeps_the_old_file(monkeypatch, tmp_path, capsys):
    # the file-size limit stands in for a full disk: each write fails partway, and the old
    # file stays whole (not a truncated new one in its place)
    pytest.importorskip("matplotlib")
    from cfrkit.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    outputs = ["--json", "r.json", "--plot", "r.png"]
    assert main(["solve", "kuhn", "--iterations", "5", "--quiet", *outputs]) == 0
    old = {name: (tmp_path / name).read_bytes() for name in ("r.json", "r.png")}
    capsys.readouterr()
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG, not a signal
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, limits[1]))
    try:
        status = main(["solve", "kuhn", "--iterations", "10", "--quiet", *outputs])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, handler)
    assert status == 1
    assert capsys.readouterr().err == (
        "cfrkit: --json r.json: not written: File too large\n"
        "cfrkit: --plot r.png: not written: File too large\n")
    assert {name: (tmp_path / name).read_bytes() for name in old} == old
    assert sorted(os.listdir(tmp_path)) == ["r.json", "r.png"]
