"""The core's build where it cannot be compiled: a plain Python wheel after exactly one
line of warning, from a copy of the source (`KLONDIKE_PURE_PYTHON=1`, and a C compiler
that is not there)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from klondike_live.compiled import MODULES

from test_wheel import copy_source
from waits import scaled


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of what a release is built from."""
    target = tmp_path_factory.mktemp("source")
    copy_source(target)
    return target


@pytest.mark.parametrize(
    ("setting", "reason"),
    [
        ({"KLONDIKE_PURE_PYTHON": "1"}, "KLONDIKE_PURE_PYTHON is set"),
        ({"CC": "/nonexistent/cc"}, "no C compiler"),
    ],
)
def test_a_core_that_cannot_be_compiled_installs_as_plain_python(
    source: Path, tmp_path: Path, setting: dict[str, str], reason: str
) -> None:
    """The wheel is `py3-none-any`, holds every core module as a `.py` file and no
    extension module, and the build said why in one line of warning."""
    env = {name: value for name, value in os.environ.items() if name != "KLONDIKE_PURE_PYTHON"}
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, "wheel", "--no-deps", "--verbose", "--wheel-dir", str(tmp_path), str(source)],
        env=env | setting,
        capture_output=True,
        text=True,
        check=True,
        timeout=scaled(300),
    )
    output = (done.stdout + done.stderr).splitlines()
    warnings = [line.strip() for line in output if "warning: klondike-live" in line]
    assert warnings == [
        f"warning: klondike-live installs as pure Python ({reason}); its core runs slower"
    ]
    (wheel,) = tmp_path.glob("klondike_live-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert not [name for name in names if name.endswith((".so", ".pyd"))]
    for module in MODULES:
        assert module.replace(".", "/") + ".py" in names
