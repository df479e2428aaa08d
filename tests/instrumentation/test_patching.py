"""The patch table machinery on throwaway modules: on-import patching, missing targets, removal."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import wrapt

from mcp_otel.instrumentation.patching import Patch, Patcher

MODULE_SOURCE = """
class Greeter:
    def greet(self, name):
        return f"hello {name}"

    async def welcome(self, name, *, formal=False):
        \"\"\"Welcome someone.\"\"\"
        return f"welcome {name}" + (", sir" if formal else "")

def shout(text):
    return text.upper()
"""


@pytest.fixture
def module_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> str:
    name = f"patch_target_{request.node.name.replace('[', '_').replace(']', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def exclaim(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    return wrapped(*args, **kwargs) + "!"


def test_patches_a_loaded_module_and_removes_the_patch(module_name: str) -> None:
    module = importlib.import_module(module_name)
    original = module.Greeter.__dict__["greet"]
    patcher = Patcher([Patch(module_name, "Greeter.greet", exclaim), Patch(module_name, "shout", exclaim)])
    patcher.start()
    assert module.Greeter().greet("a") == "hello a!"
    assert module.shout("a") == "A!"
    assert isinstance(module.Greeter.__dict__["greet"], wrapt.FunctionWrapper)
    patcher.stop()
    assert module.Greeter.__dict__["greet"] is original
    assert module.Greeter().greet("a") == "hello a"
    assert module.shout("a") == "A"


def test_patches_a_module_imported_later(module_name: str) -> None:
    assert module_name not in sys.modules
    patcher = Patcher([Patch(module_name, "Greeter.greet", exclaim)])
    patcher.start()
    module = importlib.import_module(module_name)
    assert module.Greeter().greet("b") == "hello b!"
    patcher.stop()
    assert module.Greeter().greet("b") == "hello b"


def test_a_stopped_patcher_does_not_patch_on_import(module_name: str) -> None:
    patcher = Patcher([Patch(module_name, "shout", exclaim)])
    patcher.start()
    patcher.stop()
    module = importlib.import_module(module_name)
    assert module.shout("c") == "C"


def test_missing_targets_are_skipped_and_logged_once(module_name: str, caplog: pytest.LogCaptureFixture) -> None:
    module = importlib.import_module(module_name)
    patcher = Patcher(
        [
            Patch(module_name, "Greeter.missing", exclaim),
            Patch(module_name, "Absent.method", exclaim, optional=True),
            Patch(module_name, "shout", exclaim),
        ]
    )
    with caplog.at_level(logging.DEBUG, logger="mcp_otel"):
        patcher.start()
        patcher.stop()
        patcher.start()
    assert module.shout("d") == "D!"
    warnings = [record for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "Greeter.missing" in warnings[0].getMessage()
    assert any("Absent.method" in record.getMessage() for record in caplog.records if record.levelno == logging.DEBUG)
    patcher.stop()
    assert module.shout("d") == "D"


def test_an_inner_patch_is_a_plain_function_that_calls_its_wrapper_as_wrapt_would(module_name: str) -> None:
    module = importlib.import_module(module_name)
    original = module.Greeter.__dict__["welcome"]
    seen: list[tuple[Any, ...]] = []

    def noting(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        seen.append((wrapped.__func__, wrapped.__self__, instance, args, kwargs))
        return wrapped(*args, **kwargs)

    patcher = Patcher([Patch(module_name, "Greeter.welcome", noting, inner=True)])
    patcher.start()
    patched = module.Greeter.__dict__["welcome"]
    assert type(patched) is type(original)  # a function, not a proxy: it binds in C
    assert patched is not original
    assert patched.__wrapped__ is original
    named = (patched.__name__, patched.__qualname__, patched.__doc__)
    assert named == ("welcome", "Greeter.welcome", "Welcome someone.")
    assert inspect.signature(patched) == inspect.signature(original)
    greeter = module.Greeter()
    assert asyncio.run(greeter.welcome("a", formal=True)) == "welcome a, sir"
    assert asyncio.run(module.Greeter.welcome(greeter, "b")) == "welcome b"  # called on the class
    assert seen == [(original, greeter, greeter, ("a",), {"formal": True}), (original, greeter, greeter, ("b",), {})]
    patcher.stop()
    assert module.Greeter.__dict__["welcome"] is original


def test_an_inner_patch_of_a_coroutine_function_still_reads_as_one(module_name: str) -> None:
    """``asyncio.iscoroutinefunction`` and ``unittest.mock``'s autospec (which asks it, or
    ``inspect`` on 3.12+) see a coroutine function; ``inspect.iscoroutinefunction`` does from
    Python 3.12 on (before, it reads only the code's flags)."""
    module = importlib.import_module(module_name)
    patcher = Patcher([Patch(module_name, "Greeter.welcome", exclaim, inner=True)])
    patcher.start()
    try:
        assert asyncio.iscoroutinefunction(module.Greeter.welcome)
        assert inspect.iscoroutinefunction(module.Greeter.welcome) is (sys.version_info >= (3, 12))
        assert isinstance(mock.create_autospec(module.Greeter, instance=True).welcome, mock.AsyncMock)
        assert not asyncio.iscoroutinefunction(module.Greeter.greet)
    finally:
        patcher.stop()


def test_an_inner_patch_of_what_is_not_a_method_is_a_wrapt_proxy(module_name: str) -> None:
    module = importlib.import_module(module_name)
    patcher = Patcher([Patch(module_name, "shout", exclaim, inner=True)])
    patcher.start()
    assert isinstance(module.shout, wrapt.FunctionWrapper)
    assert module.shout("e") == "E!"
    patcher.stop()
    assert module.shout("e") == "E"
