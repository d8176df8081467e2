"""TCP_NODELAY set from outside on a process's connection to a port (store.replica_link),
here on this process's own loopback connection (the cluster tests check the replicas)."""

from __future__ import annotations

import os
import socket

import pytest

from klondike_live.store import replica_link

pytestmark = pytest.mark.skipif(not replica_link.supported(), reason="Linux with pidfd only")


def test_the_link_to_a_port_is_found_and_gets_nodelay() -> None:
    """The connection to the listening port is found by its remote port, not the
    accepted end; its option goes from off to on, and setting it again changes nothing."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = server.accept()
            with accepted:
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
                assert replica_link.master_link_fds(os.getpid(), port) == [client.fileno()]
                assert replica_link.master_link_nodelay(os.getpid(), port) == [False]

                assert replica_link.set_nodelay_on_master_link(os.getpid(), port) is True
                assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                assert replica_link.set_nodelay_on_master_link(os.getpid(), port) is False


def test_no_link_to_a_port_changes_nothing() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
    assert replica_link.master_link_fds(os.getpid(), port) == []
    assert replica_link.set_nodelay_on_master_link(os.getpid(), port) is False
