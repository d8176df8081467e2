"""The wheel carries the browser client: `build_py` copies the files that
`klondike_live.gateway.client_files` selects from client_web/ (the ES modules, style,
index.html and the npm runtime from client_web/node_modules, so run `npm ci --prefix
client_web` first) into klondike_live/client_web/, where an installed server finds them.
Everything else about the package is in pyproject.toml. Editable installs copy nothing:
they serve the checkout's client_web/."""

from __future__ import annotations

import runpy
import shutil
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
CLIENT = HERE / "client_web"
RULES: dict[str, Any] = runpy.run_path(
    str(HERE / "server" / "klondike_live" / "gateway" / "client_files.py")
)


class BuildPyWithClient(build_py):
    """build_py, then the client's files into the package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
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


setup(cmdclass={"build_py": BuildPyWithClient})
