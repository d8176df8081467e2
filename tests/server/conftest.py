"""Server tests: every test client's race frames go through the leak auditor.

leak_audit (autouse)
    Every `klondike_live.client.Client` a test creates is remembered; after the test,
    every race frame each of them received is checked by the leak auditor
    (`auditor.audit_clients`) against the races as stored in Valkey. A card a client
    could not know fails the test.

The shared fixtures (`valkey_url`, `redis`, `make_settings`, `wait_for`) are in
tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from klondike_live.embedded import open_redis


@pytest.fixture(autouse=True)
async def leak_audit(valkey_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    """Audit, after the test, every frame every test client received (see above)."""
    from klondike_live.client import Client

    from auditor import audit_clients

    clients: list[Client] = []
    original = Client.__init__

    def remember(self: Client, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        clients.append(self)

    monkeypatch.setattr(Client, "__init__", remember)
    yield
    if clients:
        client = await open_redis(valkey_url)
        try:
            await audit_clients(client, clients)
        finally:
            await client.aclose()
