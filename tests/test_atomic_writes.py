"""Every file cfrkit writes goes through one atomic write: the same errors and permissions
for checkpoints, compiled games, policies and sweep tables."""

from __future__ import annotations

import errno
import os
import resource
import signal
import stat
import threading
import time

import pytest

import cfrkit
from cfrkit._files import STALE_SECONDS, replacing
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


@pytest.mark.parametrize("what", sorted(WRITERS))
def test_a_symbolic_link_is_followed_and_kept(what, tmp_path):
    (tmp_path / "runs").mkdir()
    real = tmp_path / "runs" / "r7"
    real.write_bytes(b"old")
    link = tmp_path / "latest"
    link.symlink_to(real)
    WRITERS[what](link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() != b"old"  # the file the link names holds the new contents
    assert sorted(os.listdir(tmp_path / "runs")) == ["r7"]


@pytest.mark.parametrize("what", sorted(WRITERS))
def test_a_named_pipe_is_written_into_not_replaced(what, tmp_path):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    reader.start()
    WRITERS[what](pipe)
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)  # still the pipe, not a file in its place
    assert received and len(received[0]) > 100
    assert os.listdir(tmp_path) == ["pipe"]


@pytest.mark.parametrize("what", sorted(WRITERS))
def test_a_file_too_large_is_named_and_the_old_file_kept(what, tmp_path):
    # the file-size limit stands in for a full disk: the write fails halfway through
    target = tmp_path / "out"
    target.write_bytes(b"old")
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG, not a signal
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100, limits[1]))
    try:
        with pytest.raises(OSError) as info:
            WRITERS[what](target)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, handler)
    assert info.value.errno == errno.EFBIG and info.value.filename == str(target)
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["out"]


def test_temporary_files_a_killed_writer_left_are_removed_later(tmp_path):
    target = tmp_path / "out.npz"
    stale, fresh = tmp_path / ".out.npz.0123456789ab.tmp", tmp_path / ".out.npz.ba9876543210.tmp"
    other = tmp_path / ".other.npz.0123456789ab.tmp"  # another target's: not this write's to judge
    notes = tmp_path / ".out.npz.my-notes.tmp"  # the user's, not of a writer's shape
    for path in (stale, fresh, other, notes):
        path.write_bytes(b"half")
    old = time.time() - STALE_SECONDS - 60
    for path in (stale, other, notes):
        os.utime(path, (old, old))
    WRITERS["policy"](target)
    assert sorted(os.listdir(tmp_path)) == sorted([".other.npz.0123456789ab.tmp", "out.npz",
                                                   ".out.npz.ba9876543210.tmp",
                                                   ".out.npz.my-notes.tmp"])


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names a descriptor's file")
@pytest.mark.parametrize("what", sorted(WRITERS))
def test_the_data_reaches_the_disk_before_the_rename(what, tmp_path, monkeypatch):
    # a crash right after the rename must not leave an empty file in the old one's place
    calls = []
    fsync, replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append(("fsync", os.readlink(
        f"/proc/self/fd/{fd}"))) or fsync(fd))
    monkeypatch.setattr(os, "replace", lambda a, b: calls.append(("replace", str(a))) or
                        replace(a, b))
    WRITERS[what](tmp_path / "out.npz")
    assert [kind for kind, _ in calls] == ["fsync", "replace"]
    assert calls[0][1] == calls[1][1]  # the temporary file, synced, then renamed


def test_ctrl_c_while_writing_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with replacing(target) as temporary:
            temporary.write_text("half")
            raise KeyboardInterrupt
    assert os.listdir(tmp_path) == ["out.json"] and target.read_text() == "old"


def test_an_error_about_another_file_is_left_as_it_is(tmp_path):
    # only errors of the write itself are renamed to the target
    with pytest.raises(FileNotFoundError) as info:
        with replacing(tmp_path / "out") as temporary:
            temporary.write_text("half")
            open(tmp_path / "missing" / "input.txt")
    assert info.value.filename == str(tmp_path / "missing" / "input.txt")
    assert os.listdir(tmp_path) == []
