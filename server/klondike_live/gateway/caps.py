"""Connection caps of one node: at most so many websockets per address and per account.

    caps = ConnectionCaps(per_user=20, per_address=200)
    if not caps.admit_address(address): close 4005      # at connect
    ...
    if not caps.admit_user(user): close 4005            # at hello
    caps.release(address, user)                         # when the connection ends

The count is kept per node (a client spread over several nodes may hold that many on
each). A cap of 0 means no cap. Behind a load balancer every connection comes from the
balancer's address: `client_address` takes the client's address from
`X-Forwarded-For` when, and only when, the peer is a trusted proxy.

Checks and counts happen without awaiting in between, so concurrent handshakes can
never both take the last place.
"""

from __future__ import annotations

import collections
import ipaddress
from collections.abc import Sequence

from klondike_live.config import IPNetwork

__all__ = ["ConnectionCaps", "client_address"]


class ConnectionCaps:
    """Counts of open connections per address and per account, against their caps."""

    def __init__(self, *, per_user: int, per_address: int) -> None:
        self.per_user = per_user
        self.per_address = per_address
        self._users: collections.Counter[str] = collections.Counter()
        self._addresses: collections.Counter[str] = collections.Counter()

    def admit_address(self, address: str) -> bool:
        """Count a new connection from `address`; False (not counted) when at the cap."""
        return _admit(self._addresses, address, self.per_address)

    def admit_user(self, user: str) -> bool:
        """Count a connection's account; False (not counted) when at the cap."""
        return _admit(self._users, user, self.per_user)

    def release(self, address: str | None, user: str | None) -> None:
        """Forget a connection that ends (its address and account, where counted)."""
        for counts, key in ((self._addresses, address), (self._users, user)):
            if key is not None and counts[key] > 0:
                counts[key] -= 1
                if not counts[key]:
                    del counts[key]


def _admit(counts: collections.Counter[str], key: str, cap: int) -> bool:
    if cap and counts[key] >= cap:  # reading a Counter adds no key
        return False
    counts[key] += 1
    return True


def client_address(peer: str, forwarded: str | None, trusted: Sequence[IPNetwork]) -> str:
    """The client's address: `peer`, or, when `peer` is a trusted proxy, the last
    address in `X-Forwarded-For` that is not one (each proxy appends its peer)."""
    if not _trusted(peer, trusted) or not forwarded:
        return peer
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, trusted):
            return _normal(hop) or peer
    return _normal(hops[0]) or peer if hops else peer


def _normal(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None  # not an address (`unknown`, a name): not to be trusted


def _trusted(text: str, trusted: Sequence[IPNetwork]) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in trusted)
