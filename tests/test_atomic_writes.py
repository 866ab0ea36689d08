"""Every file cfrkit writes goes through one atomic write: the same errors and permissions
for checkpoints, compiled games, policies and sweep tables."""

from __future__ import annotations

import os
import stat

import pytest

import cfrkit
from cfrkit.games import KuhnPoker

WRITERS = {
    "checkpoint": lambda path: cfrkit.CFRPlus(KuhnPoker()).iterate(2).save(path),
    "compiled game": lambda path: cfrkit.compile_game(KuhnPoker()).save(path),
    "policy": lambda path: cfrkit.Policy.uniform(KuhnPoker()).save(path),
}


@pytest.mark.parametrize("what", sorted(WRITERS))
def test_a_folder_in_the_files_place_is_named_and_left_alone(what, tmp_path):
    folder = tmp_path / "out.npz"
    folder.mkdir()
    with pytest.raises(IsADirectoryError) as info:
        WRITERS[what](folder)
    assert info.value.filename == str(folder)  # not the temporary file beside it
    assert os.listdir(tmp_path) == ["out.npz"] and os.listdir(folder) == []


@pytest.mark.parametrize("what", sorted(WRITERS))
def test_a_missing_folder_is_named(what, tmp_path):
    target = tmp_path / "nowhere" / "out.npz"
    with pytest.raises(FileNotFoundError) as info:
        WRITERS[what](target)
    assert info.value.filename == str(target)


@pytest.mark.parametrize("what", sorted(WRITERS))
def test_new_files_get_the_permissions_of_any_new_file(what, tmp_path):
    umask = os.umask(0o022)
    try:
        WRITERS[what](tmp_path / "out")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o644  # mkstemp's would be 0600
    assert os.listdir(tmp_path) == ["out"]


def test_a_sweep_table_is_written_the_same_way(tmp_path):
    pytest.importorskip("pyarrow")
    from cfrkit.sweeps import _Table

    csv, parquet = tmp_path / "r.csv", tmp_path / "r.parquet"
    umask = os.umask(0o022)
    try:
        _Table(None, {}).write(csv, parquet)
    finally:
        os.umask(umask)
    assert sorted(os.listdir(tmp_path)) == ["r.csv", "r.parquet"]
    assert {stat.S_IMODE(p.stat().st_mode) for p in (csv, parquet)} == {0o644}
    parquet.unlink()
    parquet.mkdir()
    with pytest.raises(IsADirectoryError) as info:
        _Table(None, {}).write(csv, parquet)
    assert info.value.filename == str(parquet)
