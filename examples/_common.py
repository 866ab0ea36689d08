"""Helpers the example scripts share: output to the terminal and output.txt, plain-text tables,
checkpoint grids, figures. Not an example itself (the leading underscore keeps it out of the
example tests)."""

from __future__ import annotations

import contextlib
import datetime
import os
import platform
import shlex
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


class _Tee:
    """Write to several text streams (stdout and output.txt)."""

    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self):
        for stream in self.streams:
            stream.flush()


def header(name: str, args) -> str:
    """The first lines of an output.txt: the command, the date, the versions, the load."""
    command = shlex.join(["python", f"examples/{name}.py", *sys.argv[1:]])
    quick = "  (quick mode: small sizes)" if args.quick else ""
    load = f", load average {os.getloadavg()[0]:.1f} at the start" if hasattr(os, "getloadavg") else ""
    return (
        f"$ {command}{quick}\n"
        f"# {datetime.date.today()}, Python {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} cores{load};\n# timings are wall-clock seconds on this machine, "
        "noisy when it is shared\n"
    )


def section(title: str) -> None:
    print(f"\n{'=' * 100}\n{title}\n{'=' * 100}")


def table(rows: list[list], headings: list[str], aligns: str | None = None) -> None:
    """Print rows as a plain-text table; aligns: one 'l' or 'r' per column."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headings)]
    aligns = aligns or "l" + "r" * (len(headings) - 1)

    def line(values):
        return "  ".join(
            v.ljust(w) if a == "l" else v.rjust(w) for v, w, a in zip(values, widths, aligns)
        ).rstrip()

    print(line(headings))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print(line(row))


def marks(n: int, count: int = 60, decades: bool = True) -> np.ndarray:
    """Checkpoint iterations: ``count`` log-spaced ones (with every power of ten if
    ``decades``), ending at n."""
    points = np.geomspace(1, n, count).round().astype(np.int64)
    if not decades:
        return np.unique(np.concatenate([points, [n]]))
    powers = 10 ** np.arange(0, int(np.log10(n)) + 1)
    return np.unique(np.concatenate([points, powers[powers <= n], [n]]))


def display_path(path: Path) -> Path:
    """``path`` as printed: relative to the working directory where it can be (no home
    folder in committed outputs)."""
    path = path.resolve()
    with contextlib.suppress(ValueError):
        path = path.relative_to(Path.cwd().resolve())
    return path


def save(fig, path: Path) -> None:
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"[figure] {display_path(path)}")
