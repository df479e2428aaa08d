"""The lowest-versions environments (`make lowest`) pin exactly the lower bounds the package
declares, so that what docs/compatibility.md says was tested at the low end is what
the metadata claims: a bound raised or lowered in pyproject.toml without its environment fails
here."""

from __future__ import annotations

from importlib.metadata import requires

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.harness import REPO_ROOT

pytestmark = pytest.mark.mcp2  # reads files only: once is enough

LOWEST = {name: REPO_ROOT / "requirements" / f"lowest-{name}.txt" for name in ("mcp1", "mcp2")}


def pins(name: str) -> dict[str, Version]:
    """The ``package==version`` lines of a lowest-versions requirements file."""
    found = {}
    for line in LOWEST[name].read_text().splitlines():
        requirement = line.split("#")[0].strip()
        if "==" in requirement:
            package, version = requirement.split("==")
            found[canonicalize_name(package.strip())] = Version(version.strip())
    return found


def extras(name: str) -> set[str]:
    """The extras a lowest-versions environment installs the package with (its ``-e .[...]``)."""
    (line,) = [line for line in LOWEST[name].read_text().splitlines() if line.startswith("-e .")]
    return set(Requirement(f"mcp-otel{line.removeprefix('-e .')}").extras)


def lower_bounds(with_extras: set[str] | None = None) -> dict[str, Version]:
    """Each dependency of the package and its ``>=`` bound: all of them, or those installed with
    ``with_extras``."""
    bounds = {}
    for line in requires("mcp-otel") or []:
        requirement = Requirement(line)
        applies = requirement.marker is None or with_extras is None
        if not applies and not any(requirement.marker.evaluate({"extra": extra}) for extra in with_extras or ()):
            continue
        (bound,) = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        bounds[canonicalize_name(requirement.name)] = Version(bound)
    return bounds


def installed_bounds(name: str) -> dict[str, Version]:
    """The bounds that apply to a lowest-versions environment (its extras; mcp is in all)."""
    return lower_bounds(extras(name) | {"instruments"})


def test_every_lower_bound_is_pinned_where_it_applies() -> None:
    for package, bound in lower_bounds().items():
        tested = [name for name in LOWEST if package in installed_bounds(name) and pins(name).get(package) == bound]
        assert tested, f"{package}>={bound} is tested nowhere at its bound"


def test_each_sdk_major_is_tested_at_its_first_release() -> None:
    (mcp,) = [Requirement(line) for line in requires("mcp-otel") or [] if line.startswith("mcp")]
    assert pins("mcp1")["mcp"] == lower_bounds()["mcp"]
    assert pins("mcp2")["mcp"] == Version("2.0.0")
    assert Version("2.0.0") in mcp.specifier
    assert Version("3.0.0") not in mcp.specifier


def test_no_pin_is_below_a_declared_bound() -> None:
    for name in LOWEST:
        bounds = installed_bounds(name)
        for package, version in pins(name).items():
            assert package not in bounds or version >= bounds[package], (name, package, version)
