"""One version number: the package, its metadata, the browser client and the changelog agree."""

from __future__ import annotations

import json
import re
from importlib.metadata import version
from pathlib import Path

import klondike_live

ROOT = Path(__file__).resolve().parent.parent

# A release heading such as `## [0.2.0] - 2026-12-01`; `## [Unreleased]` does not match.
RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+[^\]]*)\]", re.MULTILINE)


def changelog_version() -> str:
    """The version of the first (newest) release heading in CHANGELOG.md."""
    found = RELEASE.search((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    assert found, "CHANGELOG.md names no release (a heading like '## [0.2.0] - 2026-12-01')"
    return found.group(1)


def test_version_is_a_semantic_version() -> None:
    """klondike_live.__version__ is MAJOR.MINOR.PATCH."""
    assert re.fullmatch(r"\d+\.\d+\.\d+", klondike_live.__version__)


def test_installed_metadata_reads_the_package_version() -> None:
    """The installed distribution's version is klondike_live.__version__ (pip install -e .)."""
    assert version("klondike-live") == klondike_live.__version__


def test_client_package_json_has_the_package_version() -> None:
    """client_web/package.json carries the same version as the Python package."""
    package = json.loads((ROOT / "client_web" / "package.json").read_text(encoding="utf-8"))
    assert package["version"] == klondike_live.__version__


def test_changelog_starts_at_the_package_version() -> None:
    """The newest release in CHANGELOG.md is the package version."""
    assert changelog_version() == klondike_live.__version__
