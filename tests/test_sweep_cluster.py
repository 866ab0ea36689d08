"""A sweep on an existing Ray cluster (``address=``): a head node without CPUs and a second
node with two, started on this machine by ``ray.cluster_utils.Cluster``, so that every run
has to go to the other node; the cluster outlives the sweep."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("pyarrow")
cluster_utils = pytest.importorskip("ray.cluster_utils")

import cfrkit  # noqa: E402
from cfrkit.games import KuhnPoker  # noqa: E402


@pytest.fixture
def two_node_cluster():
    if ray.is_initialized():
        ray.shutdown()
    options = dict(include_dashboard=False, object_store_memory=80 * 1024 * 1024)
    cluster = cluster_utils.Cluster(initialize_head=True,
                                    head_node_args=dict(num_cpus=0, **options))
    try:
        cluster.add_node(num_cpus=2, **options)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()


def test_a_sweep_runs_on_the_other_node_of_a_cluster(tmp_path, two_node_cluster, monkeypatch):
    connected = []
    real_init = ray.init

    def init(*args, **kwargs):  # the sweep connects to the cluster, not to a Ray of its own
        connected.append(kwargs.get("address", args[0] if args else None))
        return real_init(*args, **kwargs)

    monkeypatch.setattr(ray, "init", init)
    table = cfrkit.sweep(games=["kuhn"], trainers=["cfr+", "external-sampling"], seeds=[0, 1],
                         max_iterations=50, output=tmp_path / "out",
                         address=two_node_cluster.address, progress=False)
    monkeypatch.setattr(ray, "init", real_init)
    assert connected == [two_node_cluster.address]
    runs = table.filter(table["last"]).to_pylist()
    assert sorted((r["trainer"], r["seed"]) for r in runs) == [
        ("cfr+", None), ("external-sampling", 0), ("external-sampling", 1)]
    assert all(r["status"] == "ok" and r["final_iteration"] == 50 for r in runs), runs
    # the runs are the runs this process makes (the head has no CPU: they ran on the other node)
    for run in runs:
        if run["trainer"] == "cfr+":
            expected = cfrkit.CFRPlus(KuhnPoker())
        else:
            expected = cfrkit.ExternalSamplingCFR(KuhnPoker(), seed=run["seed"])
        assert run["final_nash_conv"] == expected.solve(max_iterations=50).nash_conv[-1]
    # the sweep disconnected and left the cluster running: a second connection sees both nodes
    assert not ray.is_initialized()
    ray.init(address=two_node_cluster.address, include_dashboard=False, log_to_driver=False)
    try:
        assert sum(node["Alive"] for node in ray.nodes()) == 2
        assert ray.cluster_resources().get("CPU") == 2
    finally:
        ray.shutdown()
