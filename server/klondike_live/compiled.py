"""Which build of the pure core is running: compiled by mypyc, or plain Python.

`MODULES` are the modules that `pip install` compiles to C extension modules where it
can (setup.py reads them from here): the engine, the solver's state and search, the race
rules and visibility, and the protocol's decoding. They are pure, typed Python, so the
same source runs either way and gives the same answers; compiling only makes it faster.
Where there is no C compiler, or the build fails, or `KLONDIKE_PURE_PYTHON=1` was set
when installing, the package is installed as plain Python, and `compiled()` says so.

In an editable checkout the extension modules sit next to their `.py` files, and Python
imports an extension module before a source file of the same name: `stale()` lists the
compiled modules whose source changed after they were built, which `make` rebuilds.

This module imports only the standard library at its top, as setup.py runs it before
the package exists.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from pathlib import Path
from typing import Final

MODULES: Final = (
    "klondike_live.engine.board",
    "klondike_live.engine.cards",
    "klondike_live.engine.counts",
    "klondike_live.engine.deal",
    "klondike_live.engine.moves",
    "klondike_live.engine.position",
    "klondike_live.engine.record",
    "klondike_live.engine.scoring",
    "klondike_live.engine.variant",
    "klondike_live.engine.view",
    "klondike_live.solver.state",
    "klondike_live.solver.search",
    "klondike_live.solver.hints",
    "klondike_live.solver.par",
    "klondike_live.race.ranking",
    "klondike_live.race.rules",
    "klondike_live.race.visibility",
    "klondike_live.race.redaction",
    "klondike_live.race.live_board",
    "klondike_live.protocol.incoming",
)
"""The compiled modules, by their dotted names."""

PURE_ENV: Final = "KLONDIKE_PURE_PYTHON"
"""Set to 1 when installing to install plain Python even where a C compiler exists."""


def module_files(root: Path) -> list[Path]:
    """The source file of each of `MODULES` under `root`, the folder holding the
    `klondike_live` package."""
    return [root.joinpath(*name.split(".")).with_suffix(".py") for name in MODULES]


def _is_extension(name: str) -> bool:
    origin = getattr(sys.modules.get(name) or importlib.import_module(name), "__file__", None)
    return origin is not None and origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def compiled_modules() -> list[str]:
    """Those of `MODULES` that run as extension modules (importing them)."""
    return [name for name in MODULES if _is_extension(name)]


def compiled() -> bool:
    """True when every module of `MODULES` runs compiled."""
    return len(compiled_modules()) == len(MODULES)


def describe() -> str:
    """The build in a few words, for `--version`, the startup log and `/healthz`."""
    count = len(compiled_modules())
    if count == len(MODULES):
        return "compiled (mypyc)"
    if count == 0:
        return "pure Python"
    return f"partly compiled ({count} of {len(MODULES)} modules)"


def stale() -> list[str]:
    """The compiled modules whose `.py` file is newer than the extension module loaded
    for it: an editable checkout changed since its last build."""
    found = []
    for name in compiled_modules():
        module = sys.modules[name]
        built = Path(str(module.__file__))
        source = built.parent / (name.rsplit(".", 1)[-1] + ".py")
        if source.exists() and source.stat().st_mtime > built.stat().st_mtime:
            found.append(name)
    return found


def main() -> None:
    """`python -m klondike_live.compiled`: one line of warning when the core does not run
    compiled (or runs older compiled sources), nothing when it does (`make` runs it after
    installing)."""
    outdated = stale()
    if outdated:
        print(f"warning: klondike-live core compiled from older sources of {', '.join(outdated)}")
    elif not compiled():
        print(f"warning: klondike-live core runs as {describe()}, slower than compiled")


if __name__ == "__main__":
    main()
