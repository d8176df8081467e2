"""The build steps pyproject.toml cannot declare.

The browser client: `build_py` copies the files that `klondike_live.gateway.client_files`
selects from client_web/ (the ES modules, style, index.html and the npm runtime from
client_web/node_modules, so run `npm ci --prefix client_web` first) into
klondike_live/client_web/, where an installed server finds them. Editable installs copy
nothing: they serve the checkout's client_web/.

The compiled core: the modules `klondike_live.compiled.MODULES` names are compiled by
mypyc into C extension modules. Where that cannot be done (`KLONDIKE_PURE_PYTHON=1`, no
mypyc, no C compiler, or a failed build) the package installs as plain Python after one
line of warning. An editable install builds the extension modules in place, next to
their sources; every editable build first removes the ones an earlier build left there,
so none can outlive its source.
"""

from __future__ import annotations

import os
import runpy
import shutil
import sys
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
CLIENT = HERE / "client_web"
SERVER = HERE / "server"
RULES: dict[str, Any] = runpy.run_path(
    str(SERVER / "klondike_live" / "gateway" / "client_files.py")
)
CORE: dict[str, Any] = runpy.run_path(str(SERVER / "klondike_live" / "compiled.py"))
GROUP = "klondike_live"


def _pure(reason: str) -> list[Extension]:
    print(
        f"warning: klondike-live installs as pure Python ({reason}); its core runs slower",
        file=sys.stderr,
    )
    return []


def _c_compiler() -> str | None:
    """The C compiler's command when it can be found, else None."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    compiler: Any = new_compiler()
    customize_compiler(compiler)
    command = getattr(compiler, "compiler_so", None) or ["cc"]
    return shutil.which(command[0])


def _core_extensions() -> list[Extension]:
    if os.environ.get(CORE["PURE_ENV"], "") not in ("", "0"):
        return _pure(f"{CORE['PURE_ENV']} is set")
    try:
        from mypyc.build import mypycify
    except ImportError:
        return _pure("mypyc is not installed")
    if _c_compiler() is None:
        return _pure("no C compiler")
    sources = [str(path.relative_to(HERE)) for path in CORE["module_files"](SERVER)]
    try:
        extensions: list[Extension] = mypycify(
            # The modules' imports are type-checked with them but their errors are not
            # this build's business, and the build environment lacks the dependencies.
            ["--follow-imports=silent", "--ignore-missing-imports", *sources],
            opt_level="3",
            debug_level="0",
            group_name=GROUP,
        )
    except (Exception, SystemExit) as error:
        return _pure(f"mypyc failed: {error}")
    return extensions


def _remove_built_in_place() -> None:
    """The extension modules of an earlier editable build, found next to the sources."""
    suffixes = (".so", ".pyd")
    for path in [*SERVER.glob(f"{GROUP}__mypyc*"), *(SERVER / "klondike_live").rglob("*")]:
        if path.suffix in suffixes and path.is_file():
            path.unlink()


class BuildPyWithClient(build_py):
    """build_py, then the client's files into the package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            _remove_built_in_place()
            return
        missing = RULES["missing_runtime"](CLIENT)
        if missing:
            raise SystemExit(
                f"client_web lacks its npm runtime ({', '.join(missing)}): "
                "run `npm ci --prefix client_web` before building"
            )
        target = Path(self.build_lib) / "klondike_live" / "client_web"
        shutil.rmtree(target, ignore_errors=True)
        for name in RULES["client_files"](CLIENT):
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(CLIENT / name, target / name)


class BuildExtOrPure(build_ext):
    """build_ext, or no extension modules at all when the C build fails."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:
            _pure(f"the C build failed: {error}")
            self.extensions = []


# Only the commands that build need the extension modules: the metadata and the source
# distribution do not, and the type check that mypycify begins with takes seconds.
BUILDING = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install"}

setup(
    ext_modules=_core_extensions() if BUILDING & set(sys.argv[1:]) else [],
    cmdclass={"build_py": BuildPyWithClient, "build_ext": BuildExtOrPure},
)
