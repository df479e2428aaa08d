"""Reading a field of what the SDKs hand us: dicts, pydantic models (fields, extras, properties)
and plain objects, ``None`` when absent, without a failing lookup on models."""

from __future__ import annotations

import pytest

from mcp_otel.model.fields import field


class _Model:
    """A plain object with a property: read like any attribute."""

    name = "plain"

    @property
    def computed(self) -> int:
        return 3


def test_field_reads_dicts_models_and_objects() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Params(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="allow")
        name: str

        @property
        def shown(self) -> str:
            return self.name.upper()

    params = Params(name="x", inputResponses={"a": {"action": "decline"}})
    assert field(params, "name") == "x"
    assert field(params, "inputResponses") == {"a": {"action": "decline"}}
    assert field(params, "shown") == "X"
    assert field(params, "absent") is None
    assert field({"name": "d"}, "name") == "d"
    assert field(_Model(), "name") == "plain"
    assert field(_Model(), "computed") == 3
    assert field(_Model(), "absent") is None
    assert field(None, "name") is None
