"""The browser client's golden games are what the engine makes today."""

from client_fixtures import FIXTURE, render


def test_client_fixture_file_is_current() -> None:
    """client_web/test/fixtures/games.json matches the engine (refresh: see client_fixtures)."""
    assert FIXTURE.read_text() == render(), "run: .venv/bin/python tests/browser/client_fixtures.py"
