"""Which files make the browser client, and where they are: the one rule that both the
server (`assets.ClientAssets`) and the wheel's build (`setup.py`) apply.

The client is `client_web/` as it is in the source tree, less what only its developers
use (tests, tool configuration, npm's metadata and the dev tools in node_modules), plus
the npm runtime the page imports (`RUNTIME`: the ES module build of each dependency in
client_web/package.json). A wheel carries exactly these files in
`klondike_live/client_web/`; an installed server serves that copy, a source checkout
(`make run`, editable installs) serves `client_web/` itself.

This module uses the standard library only: `setup.py` runs it by path, before the
package can be imported.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "PACKAGED",
    "RUNTIME",
    "RUNTIME_NOTICES",
    "SOURCE",
    "client_files",
    "client_root",
    "missing_runtime",
]

# The copy inside an installed package, and the source tree's folder (a checkout).
PACKAGED = Path(__file__).resolve().parents[1] / "client_web"
SOURCE = Path(__file__).resolve().parents[3] / "client_web"

# The npm runtime served to the page: a folder under client_web/ and the endings of the
# files in it that the page loads. One entry per dependency of client_web/package.json
# (tests/packaging checks that). msgpack's is its one-file build, which index.html loads
# and src/msgpack.js exports (one request where its ES modules take sixteen);
# intl-messageformat's is its one-file ES module (no imports), which the import map names.
RUNTIME: dict[str, tuple[str, ...]] = {
    "node_modules/@msgpack/msgpack/dist.umd": ("msgpack.min.js",),
    "node_modules/intl-messageformat": ("intl-messageformat.iife.js",),
}
# Their licence texts, which go wherever their code goes.
RUNTIME_NOTICES = (
    "node_modules/@msgpack/msgpack/LICENSE",
    "node_modules/intl-messageformat/LICENSE.md",
)

# What only the client's developers use, never served or packaged.
_DEV_FOLDERS = frozenset({"node_modules", "test"})
_DEV_FILES = frozenset(
    {"package.json", "package-lock.json", "eslint.config.js", "tsconfig.json", "README.md"}
)


def client_root() -> Path:
    """The client's folder: the installed package's copy if there is one, else the
    source tree's `client_web/`."""
    return PACKAGED if PACKAGED.is_dir() else SOURCE


def client_files(root: Path) -> list[str]:
    """The client's files under `root`, as sorted relative POSIX paths."""
    found: set[str] = set()
    for folder, subfolders, names in os.walk(root):
        here = Path(folder)
        # Pruned in place, so that os.walk never enters node_modules or a hidden folder.
        subfolders[:] = [
            name
            for name in subfolders
            if not name.startswith(".") and not (here == root and name in _DEV_FOLDERS)
        ]
        found.update(
            (here / name).relative_to(root).as_posix()
            for name in names
            if not name.startswith(".") and not (here == root and name in _DEV_FILES)
        )
    for folder, endings in RUNTIME.items():
        for inside, _, names in os.walk(root / folder):
            found.update(
                (Path(inside) / name).relative_to(root).as_posix()
                for name in names
                if name.endswith(endings)
            )
    found.update(notice for notice in RUNTIME_NOTICES if (root / notice).is_file())
    return sorted(found)


def missing_runtime(root: Path) -> list[str]:
    """The runtime folders absent under `root` (npm ci not run yet)."""
    return [folder for folder in RUNTIME if not (root / folder).is_dir()]
