"""A game too large for the memory there is stops with a GameError saying how far it got --
early, not with a MemoryError (or an allocator's crash) after a long wait."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cfrkit import GameError, compile_game
from cfrkit.tree import memory

from probe_game import Probe

TESTS = Path(__file__).resolve().parent

WIDE = '''
import cfrkit

class Wide(cfrkit.Game):
    """8 actions at each of 12 levels (78 billion nodes), each history carrying 1 kB."""
    num_players, name = 2, "wide"
    def root(self):
        return WideHistory(())

class WideHistory(cfrkit.History):
    def __init__(self, path):
        self.path, self.payload = path, bytes(1000)
    def is_terminal(self): return len(self.path) == 12
    def is_chance(self): return False
    def current_player(self): return len(self.path) % 2
    def actions(self): return tuple(range(8))
    def chance_outcomes(self): return ()
    def child(self, a): return WideHistory(self.path + (a,))
    def infoset_key(self): return repr(self.path)
    def utilities(self): return (1.0, -1.0)
'''

exec(WIDE)  # the same game, in this process


def run_limited(body: str, headroom: int) -> subprocess.CompletedProcess:
    """Run ``body`` in a fresh process whose address space may grow by ``headroom`` bytes
    past its size after importing cfrkit (ulimit -v, as a batch system would set it)."""
    script = WIDE + textwrap.dedent(f'''
        import resource
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (size + {headroom}, resource.RLIM_INFINITY))
    ''') + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "CFRKIT_QUIET": "1"})


linux_only = pytest.mark.skipif(not Path("/proc/self/statm").exists(),
                                reason="reads /proc/self/statm (Linux)")


@linux_only
def test_an_address_space_limit_stops_the_walk_with_a_game_error():
    done = run_limited('''
        try:
            cfrkit.compile_game(Wide())
        except cfrkit.GameError as exc:
            print("GameError:", exc)
    ''', headroom=300_000_000)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "MemoryError" not in done.stdout + done.stderr
    out = done.stdout
    assert out.startswith("GameError: Wide(name='wide'): compiling stopped at "), out
    assert "(80% of the headroom under ulimit -v); raise ulimit -v to go on" in out
    nodes = int(out.split("stopped at ")[1].split(" nodes")[0].replace(",", ""))
    # stopped near the limit: the depth-first walk keeps no histories, so a node costs its
    # records and its share of the projected layout, 100-200 bytes (240 MB / 2.4M = 100)
    assert 50_000 < nodes < 2_400_000


@linux_only
def test_running_out_of_memory_anyway_is_a_game_error():
    # with the guard switched off, the allocator fails first: still a GameError, not a crash
    done = run_limited('''
        from cfrkit.tree import memory
        memory.MemoryGuard.over = lambda self, nodes: None
        try:
            cfrkit.compile_game(Wide())
        except cfrkit.GameError as exc:
            print("GameError:", exc)
        # the walk's memory was released: the process can go on working
        from cfrkit.games import LeducPoker
        print(cfrkit.compile_game(LeducPoker()).num_nodes)
    ''', headroom=300_000_000)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("GameError: Wide(name='wide'): ran out of memory after "), lines
    assert lines[1] == "9457"


def test_max_memory_stops_the_walk():
    with pytest.raises(GameError) as info:
        compile_game(Wide(), max_memory=60_000_000)  # noqa: F821 - defined by exec(WIDE)
    message = str(info.value)
    assert "compiling stopped at" in message and "(max_memory)" in message
    assert "over the 60 MB allowed" in message and len(message) < 300


def test_the_default_budget_follows_the_available_memory(monkeypatch):
    monkeypatch.setattr(memory, "_available_resident", lambda: 100_000_000)
    with pytest.raises(GameError) as info:
        compile_game(Wide())  # noqa: F821
    message = str(info.value)
    assert "over the 80 MB allowed (80% of the memory available)" in message


def test_the_projection_counts_what_flattening_needs(monkeypatch):
    # nothing measured yet, but flattening a million nodes needs ~100 MB: over a 50 MB budget
    guard = memory.MemoryGuard(50_000_000, num_players=2)
    assert guard.over(10_000) is None
    assert "flattening needs about 112 MB" in guard.over(1_000_000)


def test_a_game_within_the_budget_compiles_as_without_one():
    game = Probe()
    assert compile_game(game, max_memory=10**12).fingerprint == compile_game(Probe()).fingerprint


def test_a_memory_error_inside_the_game_is_reported_as_running_out_of_memory():
    with pytest.raises(GameError, match=r"ran out of memory after \d+ nodes"):
        compile_game(Probe("child", 2, raise_=MemoryError()))


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "1GB", 10.0**9])
def test_max_memory_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="max_memory must be a positive number of bytes"):
        compile_game(Probe(), max_memory=bad)


def test_a_memory_error_in_the_walks_fast_path_ends_the_walk(monkeypatch):
    # the History walk takes common answers inline, under an except that sends anything odd
    # to visit(); a MemoryError there (here: recording the 5th infoset) must end the walk as
    # GameError, not be retried -- the earlier order of add_infoset left the key registered
    # without its rows, and visit() then failed with an IndexError
    from cfrkit.games import KuhnPoker
    from cfrkit.tree.walk import Walk

    add_infoset, calls = Walk.add_infoset, []

    def failing_once(self, key, player, actions):
        calls.append(key)
        if len(calls) == 5:
            raise MemoryError
        return add_infoset(self, key, player, actions)

    monkeypatch.setattr(Walk, "add_infoset", failing_once)
    with pytest.raises(GameError, match="ran out of memory after"):
        compile_game(KuhnPoker(players=3))
    assert len(calls) == 5
