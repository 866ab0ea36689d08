"""How much memory a compilation may use, and how much it has used so far.

The walk keeps every node's record (one int32, plus the utilities of a terminal and the
outcomes of a chance node) and the histories of the current path, and flattening needs about
100 bytes per node more, so a game that is too large runs the process out of memory -- a bare
``MemoryError``, or an allocation failure inside a C++ game library -- before ``max_nodes``
stops it. :class:`MemoryGuard` reads the process's resident and virtual size
every few thousand nodes (``/proc/self/statm`` on Linux: a few microseconds) and stops the walk,
with a :class:`~cfrkit.GameError` saying how far it got, once the memory it added, plus what
flattening the nodes walked so far will need, would pass the budget:

* ``max_memory`` bytes when given;
* by default 80% of the memory available when the walk starts: the smallest of the
  system's available memory (``MemAvailable``), the headroom under a cgroup (container)
  memory limit, and -- against the growth of the virtual size -- the headroom under the
  address-space limit (``ulimit -v``).

Where the sizes cannot be read (no ``/proc``: macOS reports only the peak resident size,
Windows nothing), the guard uses what it can and otherwise lets ``max_nodes`` alone bound the
walk.
"""

from __future__ import annotations

import os
import sys

__all__ = ["FLATTEN_BYTES_PER_NODE", "MemoryGuard", "format_bytes"]

#: Headroom kept below the available memory by the default budget.
DEFAULT_SHARE = 0.8

#: Bytes per node the flattening step allocates on top of the walk's records, plus 8 per player
#: for the utility table: the layout's arrays and temporaries peaked at 91-111 bytes per node
#: in all, against 112-144 projected (tracemalloc; Leduc, Kuhn poker with 5 and 6 players,
#: OpenSpiel's liars_dice and leduc_poker(players=3)).
FLATTEN_BYTES_PER_NODE = 96

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def format_bytes(n: float) -> str:
    """``1.5 GB``, ``320 MB``: decimal units, as memory is usually quoted."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


def _statm() -> tuple[int, int] | None:
    """(resident, virtual) bytes of this process, or None where /proc is not there."""
    try:
        with open("/proc/self/statm", "rb") as f:
            fields = f.read().split()
        return int(fields[1]) * _PAGE, int(fields[0]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def _peak_resident() -> int | None:
    """The peak resident size (macOS and other Unixes without /proc), or None."""
    if resource is None:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
        return None if text == "max" else int(text)
    except (OSError, ValueError):
        return None


def _available_resident() -> int | None:
    """Bytes this process can still make resident: system and cgroup headroom, or None."""
    candidates = []
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    candidates.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    # cgroup v2, then v1: a container's limit is often far below the machine's memory
    for limit_file, usage_file in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
    ):
        limit, usage = _read_int(limit_file), _read_int(usage_file)
        if limit is not None and usage is not None and limit < 1 << 60:
            candidates.append(max(limit - usage, 0))
            break
    return min(candidates) if candidates else None


def _address_space_headroom(virtual: int) -> int | None:
    """Bytes the virtual size may still grow under ``ulimit -v`` (RLIMIT_AS), or None."""
    if resource is None or not hasattr(resource, "RLIMIT_AS"):
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    return max(soft - virtual, 0)


class MemoryGuard:
    """Tracks the memory a walk adds and says when it would pass the budget.

    Parameters
    ----------
    max_memory : int or None
        Budget in bytes for the memory the compilation adds; ``None`` for the default (80% of
        what is available when the walk starts, see the module docstring).
    num_players : int
        Sizes the flattening's utility table in the projection.
    """

    EVERY = 1 << 13  # nodes between two reads of the process's size

    def __init__(self, max_memory: int | None, num_players: int) -> None:
        self.explicit = max_memory is not None
        self.flatten_per_node = FLATTEN_BYTES_PER_NODE + 8 * num_players
        sizes = _statm()
        self.statm = sizes is not None
        if sizes is not None:
            self.resident0, self.virtual0 = sizes
        else:
            self.resident0, self.virtual0 = _peak_resident() or 0, 0
        if max_memory is not None:
            self.resident_budget: int | None = int(max_memory)
        else:
            available = _available_resident()
            self.resident_budget = int(DEFAULT_SHARE * available) if available is not None else None
        headroom = _address_space_headroom(self.virtual0) if self.statm else None
        self.virtual_budget = int(DEFAULT_SHARE * headroom) if headroom is not None else None
        self.active = self.resident_budget is not None or self.virtual_budget is not None

    def over(self, nodes: int) -> str | None:
        """``None`` while within budget; else a short sentence: what was used, and what to do."""
        if not self.active:
            return None
        if self.statm:
            sizes = _statm()
            if sizes is None:
                return None
            resident, virtual = sizes
        else:
            resident, virtual = _peak_resident() or 0, 0
        needed = nodes * self.flatten_per_node
        if self.resident_budget is not None:
            used = resident - self.resident0
            if used + needed > self.resident_budget:
                if self.explicit:
                    allowed, advice = "max_memory", "pass a larger max_memory= to go on"
                else:
                    allowed = "80% of the memory available"
                    advice = "free memory or pass max_memory= (bytes) to go on"
                return (f"the walk used {format_bytes(used)} and flattening needs about "
                        f"{format_bytes(needed)}, over the {format_bytes(self.resident_budget)} "
                        f"allowed ({allowed}); {advice}")
        if self.virtual_budget is not None:
            used = virtual - self.virtual0
            if used + needed > self.virtual_budget:
                return (f"the address space grew by {format_bytes(used)} and flattening needs "
                        f"about {format_bytes(needed)}, over {format_bytes(self.virtual_budget)} "
                        "(80% of the headroom under ulimit -v); raise ulimit -v to go on")
        return None
