"""`klondike-live token --bot NAME`: a bot account's token, signed with the node's secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from klondike_live.auth import verify_token
from klondike_live.cli import main
from klondike_live.config import Settings


def test_the_token_command_issues_a_bot_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KLONDIKE_SECRET", raising=False)
    assert main(["token", "--bot", "Robo Racer", "--days", "2", "--data-dir", str(tmp_path)]) == 0
    token = capsys.readouterr().out.strip()
    keys = Settings.load(data_dir=str(tmp_path)).keys
    identity = verify_token(keys, token)
    assert identity.bot and not identity.guest and identity.name == "Robo Racer"
    assert identity.user_id.startswith("bot_Robo-Racer_")


def test_a_bad_bot_name_is_refused_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["token", "--bot", " ", "--data-dir", str(tmp_path)]) == 2
    assert "--bot: display name must not be empty" in capsys.readouterr().err
