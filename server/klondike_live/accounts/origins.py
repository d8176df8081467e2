"""The relying party of a request: which RP id and origin a passkey ceremony uses.

A passkey is bound to an RP id, a host name: the one the page was served from, or a
parent domain of it. With the setting `rp_id` empty (the default) it is the request's
`Host` without its port; with `rp_id` set (`KLONDIKE_RP_ID=example.org`, for nodes
behind several host names of one domain) it is that, and the page's host must be it or
one of its subdomains.

`relying_party(host, origin, rp_id)` returns the RP id and the origin a ceremony
expects, or None when the request may not do account requests at all: a browser's
websocket always says its page's `Origin`, and account requests are taken only from a
page of this site (the origin's host is the RP id or under it, over https, or over http
for `localhost` and loopback addresses, which browsers count as secure). A client that
is no browser sends no `Origin`: it may use passwords (there is no page to forge a
request from), not passkeys. Nor may a page opened by IP address (`RelyingParty.named`):
WebAuthn's RP id is a host name.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

_LOCAL_NAMES: Final = frozenset({"localhost"})


@dataclass(frozen=True, slots=True)
class RelyingParty:
    """What a passkey ceremony of a request checks: the RP id and the page's origin
    (None: a client that is no browser, which may not use passkeys)."""

    rp_id: str
    origin: str | None

    @property
    def named(self) -> bool:
        """Whether the RP id is a host name: WebAuthn takes no IP address for one, so a
        site opened by address (`http://127.0.0.1:8765`) has no passkeys (its
        `localhost` name has)."""
        try:
            ipaddress.ip_address(self.rp_id)
        except ValueError:
            return True
        return False


def _hostname(host: str) -> str:
    """A `Host` header's name, without port or IPv6 brackets, lower-case."""
    parsed = urlsplit("//" + host.strip())
    try:
        return (parsed.hostname or "").lower()
    except ValueError:
        return ""


def _loopback(name: str) -> bool:
    if name in _LOCAL_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def relying_party(host: str | None, origin: str | None, rp_id: str = "") -> RelyingParty | None:
    """The relying party of a request with these `Host` and `Origin` headers under the
    setting `rp_id` (empty: the Host's), or None when the request is refused."""
    page_host = _hostname(host or "")
    expected = rp_id.strip().lower() or page_host
    if not expected:
        return None
    if origin is None:
        return RelyingParty(expected, None)
    parts = urlsplit(origin.strip())
    try:
        origin_host = (parts.hostname or "").lower()
    except ValueError:
        return None
    if origin_host != expected and not origin_host.endswith("." + expected):
        return None
    if parts.scheme != "https" and not (parts.scheme == "http" and _loopback(origin_host)):
        return None
    return RelyingParty(expected, f"{parts.scheme}://{parts.netloc.lower()}")
