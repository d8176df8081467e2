"""The served files: the client's own and its npm runtime, none of its developers'."""

from __future__ import annotations

import json

from klondike_live.gateway.client_files import RUNTIME, SOURCE, client_files


def test_every_npm_dependency_has_its_runtime_served() -> None:
    """Each dependency of client_web/package.json (what the page imports) has a folder
    in RUNTIME, and index.html loads from that folder."""
    package = json.loads((SOURCE / "package.json").read_text(encoding="utf-8"))
    for dependency in package["dependencies"]:
        folders = [
            folder for folder in RUNTIME if f"{folder}/".startswith(f"node_modules/{dependency}/")
        ]
        assert folders, dependency
    page = (SOURCE / "index.html").read_text(encoding="utf-8")
    for folder in RUNTIME:
        assert f'"/{folder}/' in page, folder


def test_the_client_files_leave_out_the_developers_files() -> None:
    files = client_files(SOURCE)
    assert "index.html" in files and "src/main.js" in files and "style.css" in files
    assert "node_modules/@msgpack/msgpack/dist.umd/msgpack.min.js" in files
    assert "node_modules/intl-messageformat/intl-messageformat.iife.js" in files
    assert {"locales/en.json", "locales/eu.json", "locales/es.json", "locales/fr.json"} <= set(
        files
    )
    for name in files:
        assert not name.startswith("test/"), name
        assert (
            name.startswith(
                (
                    "node_modules/@msgpack/msgpack/",
                    "node_modules/intl-messageformat/",
                    "src/",
                    "locales/",
                )
            )
            or "/" not in name
        ), name
        assert name not in ("package.json", "package-lock.json", "eslint.config.js")
