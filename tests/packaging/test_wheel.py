"""The built wheel serves the whole browser client: built from a copy of the source,
installed into a fresh virtual environment, started as `klondike-live serve` with its
embedded Valkey, away from any checkout (docs/operations.md, "Deploying from the wheel").

The fresh environment gets the wheel alone (`--no-deps --no-index`); its dependencies
come from this test run's environment through a `.pth` line, which adds that folder's
modules but none of its `.pth` files, so the editable install of the checkout stays out.
The test checks that the package it runs is the installed one.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from klondike_live import compiled
from klondike_live.gateway.client_files import SOURCE, client_files

from waits import scaled

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = "node_modules/@msgpack/msgpack/dist.umd/msgpack.min.js"


def copy_source(target: Path) -> None:
    """What a release is built from: the package, its build files and client_web (its
    tests and config too, which the wheel must leave out), with the npm runtime only."""
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE"):
        shutil.copyfile(ROOT / name, target / name)
    shutil.copytree(
        ROOT / "server",
        target / "server",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.so"),
    )

    def ignore(folder: str, names: list[str]) -> set[str]:
        if Path(folder) == SOURCE / "node_modules":
            return {name for name in names if name not in ("@msgpack", "intl-messageformat")}
        return {name for name in names if name == ".installed"}

    shutil.copytree(SOURCE, target / "client_web", ignore=ignore)


def _get(url: str, *, gzipped: bool = False) -> tuple[dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gzipped else {})
    with urllib.request.urlopen(request, timeout=scaled(10)) as response:
        assert response.status == 200, url
        return dict(response.headers), response.read()


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment with the built wheel installed; its python."""
    work = tmp_path_factory.mktemp("wheel")
    source, dist, venv = work / "source", work / "dist", work / "venv"
    source.mkdir()
    copy_source(source)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--quiet", "--wheel-dir", str(dist), str(source)],
        check=True,
        timeout=scaled(300),
    )
    shutil.rmtree(source)  # nothing of the source is left to be found
    (wheel,) = dist.glob("klondike_live-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        packaged = sorted(
            name.removeprefix("klondike_live/client_web/")
            for name in archive.namelist()
            if name.startswith("klondike_live/client_web/")
        )
    assert packaged == client_files(SOURCE)

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [*pip, "--python", str(python), "install", "--quiet", "--no-deps", "--no-index", wheel],
        check=True,
        timeout=scaled(300),
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    here = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "test_dependencies.pth").write_text(here + "\n", encoding="utf-8")
    yield python


def _clean_env() -> dict[str, str]:
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("KLONDIKE_") and name not in ("PYTHONPATH", "VIRTUAL_ENV")
    }


def test_the_installed_package_is_the_wheel(installed: Path, tmp_path: Path) -> None:
    """The fresh environment imports klondike_live from the wheel, with its client, and
    with the core built as this checkout's (compiled where a C compiler is)."""
    code = (
        "import sys, klondike_live\n"
        "from klondike_live import compiled\n"
        "from klondike_live.gateway.client_files import client_root\n"
        "print(klondike_live.__file__); print(client_root()); print(sys.path)\n"
        "print(compiled.describe())\n"
    )
    out = subprocess.run(
        [str(installed), "-c", code],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_clean_env(),
    ).stdout.splitlines()
    venv = installed.parents[1]
    assert Path(out[0]).is_relative_to(venv)
    assert Path(out[1]) == Path(out[0]).parent / "client_web"
    assert str(ROOT / "server") not in out[2]
    assert out[3] == compiled.describe()


def test_the_installed_server_serves_the_client(installed: Path, tmp_path: Path) -> None:
    """`klondike-live serve` from the wheel serves /, a module and the msgpack runtime,
    byte for byte the client's files, from the installed package."""
    log_path = tmp_path / "serve.log"
    command = [str(installed.parent / "klondike-live"), "serve", "--port", "0"]
    command += ["--data-dir", str(tmp_path / "data")]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=tmp_path, env=_clean_env(), stdout=log, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + scaled(90)
        while not (listening := re.search(r"listening on (http://\S+)/ ", log_path.read_text())):
            assert process.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.05)
        base = listening.group(1)
        _get(base + "/healthz/live")
        headers, body = _get(base + "/")
        page = body.decode()
        found = re.search(r'src="/static/([0-9a-f]{12})/src/main\.js"', page)
        assert found is not None, page
        prefix = f"{base}/static/{found.group(1)}/"
        assert f'src="/static/{found.group(1)}/{RUNTIME}"' in page
        for name in (
            "src/main.js",
            "src/net.js",
            "src/msgpack.js",
            RUNTIME,
            "style.css",
            "locales/eu.json",
        ):
            headers, body = _get(prefix + name, gzipped=True)
            assert headers["Content-Encoding"] == "gzip"
            assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
            assert gzip.decompress(body) == (SOURCE / name).read_bytes(), name
        served_from = re.search(r"serving the client from (\S+)", log_path.read_text())
        assert served_from is not None
        assert Path(served_from.group(1)).is_relative_to(installed.parents[1])
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=scaled(30))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
