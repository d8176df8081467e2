"""The server's exceptions form one tree: every exception class the package defines
outside the engine derives from `klondike_live.errors.LiveError`, and the package's
docstring names each of them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import klondike_live
from klondike_live.errors import LiveError, Refusal
from klondike_live.protocol.codes import ErrorCode


def defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined (not imported) in a module of the package."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(klondike_live.__path__, "klondike_live."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
            ):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_server_exception_derives_from_the_root() -> None:
    """Outside the engine (whose tree stands alone), every exception is a LiveError."""
    found = defined_exceptions()
    assert "klondike_live.errors.Refusal" in found  # the walk reached the package
    strays = sorted(
        name
        for name, cls in found.items()
        if not name.startswith("klondike_live.engine.") and not issubclass(cls, LiveError)
    )
    assert strays == []


def test_the_package_docstring_names_every_exception() -> None:
    """The tree in `klondike_live/__init__.py` lists each class by name."""
    doc = klondike_live.__doc__ or ""
    missing = sorted(name for name in defined_exceptions() if name.rpartition(".")[2] not in doc)
    assert missing == []


def test_refusals_of_every_layer_are_one_type() -> None:
    """The race rules' refusals, the protocol's and the tokens' are all `Refusal`s with
    an ErrorCode: the gateway answers them in one place."""
    from klondike_live.auth import AuthError
    from klondike_live.engine import Variant
    from klondike_live.protocol.incoming import ProtocolError, decode_client
    from klondike_live.protocol.kinds import RoomKind
    from klondike_live.race.room import new_room

    room = new_room(
        "r" * 22,
        kind=RoomKind.RACE,
        variant=Variant(),
        capacity=2,
        time_limit=0,
        public=False,
        host="alice",
        host_name="Alice",
        now_ms=0,
    )
    caught: list[Refusal] = []
    for attempt in (
        lambda: room.start("bob", 0, 0, "1"),
        lambda: decode_client(b"\x01"),
    ):
        try:
            attempt()
        except Refusal as exc:
            caught.append(exc)
    assert [type(c) for c in caught] == [Refusal, ProtocolError]
    assert [c.code for c in caught] == [ErrorCode.NOT_HOST, ErrorCode.MALFORMED]
    assert issubclass(AuthError, Refusal)
