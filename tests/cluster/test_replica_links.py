"""The dev cluster's replicas reach their masters without Nagle's algorithm, which
Valkey leaves on for that link (a WAIT would stall 40 ms about once a second)."""

from __future__ import annotations

import pytest

from klondike_live.store import replica_link
from klondike_live.store.devcluster import DevCluster


@pytest.mark.skipif(not replica_link.supported(), reason="Linux with pidfd only")
def test_every_replica_link_has_nodelay(cluster: DevCluster) -> None:
    cluster.wait_healthy()
    links = []
    for node in cluster.nodes:
        role = cluster._command(node.port, "ROLE")
        if role[0] in (b"slave", "slave"):
            assert node._process is not None
            links += replica_link.master_link_nodelay(node._process.pid, int(role[2]))
    assert links == [True] * cluster.masters * cluster.replicas
