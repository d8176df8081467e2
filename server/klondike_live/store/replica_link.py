"""TCP_NODELAY on a local replica's link to its master (Linux), against WAIT's 40 ms stalls.

    set_nodelay_on_master_link(pid, master_port)   # True: it was off and now is on
    master_link_nodelay(pid, master_port)          # [True]: one link, option on

A Valkey replica (valkey-server 9.1 included) opens its replication link to the master
without TCP_NODELAY: the master's side of it has the option (`repl-disable-tcp-nodelay
no`), the replica's does not, and no setting changes that. The replica writes a
`REPLCONF ACK <offset>` on that link once a second on its own, and again whenever the
master asks (`REPLCONF GETACK`, which is how `WAIT` learns that a replica has a write).
When the answer to a GETACK follows the periodic ACK before the master has acknowledged
the periodic ACK's segment, Nagle's algorithm holds it back, and the master, which has
nothing to send, acknowledges only when its delayed-ACK timer fires: about 40 ms on
Linux. So about once a second per replica a `WAIT` takes 40-45 ms instead of about
1 ms (docs/benchmarks.md, *WAIT*, has the traces).

For the servers the project starts itself (`store.devcluster.DevCluster`), this module
sets the option from outside: it finds the replica's socket connected to the master's
port (`/proc/<pid>/fd` and `/proc/<pid>/net/tcp*`), takes a duplicate of it with
`pidfd_getfd` (Linux 5.6; the caller must be allowed to trace the process, as the
parent of its own child is) and sets TCP_NODELAY on the duplicate, which is the same
socket. Anything that fails leaves the link as it was (Nagle costs latency, nothing
else). For servers an operator runs, see docs/operations.md ("WAIT and the replicas'
links").

This module must only ever be called on processes the caller started.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import sys
from pathlib import Path
from typing import Final

__all__ = [
    "master_link_fds",
    "master_link_nodelay",
    "set_nodelay_on_master_link",
    "supported",
]

_SYS_PIDFD_GETFD: Final = 438  # the same number on every Linux architecture (5.6+)
_ESTABLISHED: Final = "01"


def supported() -> bool:
    """Whether this platform can reach another process's socket (Linux with pidfd)."""
    return sys.platform == "linux" and hasattr(os, "pidfd_open")


def master_link_fds(pid: int, master_port: int) -> list[int]:
    """The descriptors, in process `pid`, of its established TCP connections to
    `master_port` (on any address): a replica's link to its master."""
    inodes: dict[str, int] = {}
    fd_dir = Path(f"/proc/{pid}/fd")
    for entry in fd_dir.iterdir():
        with contextlib.suppress(OSError):
            target = str(entry.readlink())
            if target.startswith("socket:["):
                inodes[target[len("socket:[") : -1]] = int(entry.name)
    found: list[int] = []
    for table in ("tcp", "tcp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        with contextlib.suppress(OSError):
            for line in path.read_text(encoding="ascii").splitlines()[1:]:
                columns = line.split()
                if len(columns) < 10 or columns[3] != _ESTABLISHED:
                    continue
                remote_port = int(columns[2].rsplit(":", 1)[1], 16)
                if remote_port == master_port and columns[9] in inodes:
                    found.append(inodes[columns[9]])
    return sorted(found)


def _borrow(pid: int, fd: int) -> socket.socket:
    """A duplicate, in this process, of descriptor `fd` of process `pid`."""
    pidfd = os.pidfd_open(pid)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        local = int(libc.syscall(_SYS_PIDFD_GETFD, pidfd, fd, 0))
        if local < 0:
            error = ctypes.get_errno()
            raise OSError(error, f"pidfd_getfd: {os.strerror(error)}")
    finally:
        os.close(pidfd)
    return socket.socket(fileno=local)


def master_link_nodelay(pid: int, master_port: int) -> list[bool]:
    """Whether each link of process `pid` to `master_port` has TCP_NODELAY."""
    if not supported():
        raise OSError("reading a socket option of another process needs Linux 5.6+")
    out = []
    for fd in master_link_fds(pid, master_port):
        with _borrow(pid, fd) as sock:
            out.append(bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)))
    return out


def set_nodelay_on_master_link(pid: int, master_port: int, on: bool = True) -> bool:
    """Set TCP_NODELAY (`on`, else clear it: Valkey's own choice, for benchmarks) on the
    link of replica process `pid` to its master on `master_port`; True when some link
    changed. Raises `OSError` when the platform or the process does not allow it (see
    `supported`)."""
    if not supported():
        raise OSError("setting a socket option of another process needs Linux 5.6+")
    changed = False
    for fd in master_link_fds(pid, master_port):
        with _borrow(pid, fd) as sock:
            if bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)) != on:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, int(on))
                changed = True
    return changed
