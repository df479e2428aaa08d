"""JSON with comments: read as the editors that write it read it, and edited without touching a
byte outside the changed values."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_otel.proxy import jsonc

TRICKY = """\
// header
{
  /* a block
     comment */ "a": "// not a comment, /* nor this */",
  "b": [1, 2,],  // a trailing comma
  "c": {"d": "quote \\" and ,} inside",},
  "e": "back\\\\slash" /* after a value */,
}
"""


def test_comments_and_trailing_commas_are_read_past() -> None:
    assert jsonc.loads(TRICKY) == {
        "a": "// not a comment, /* nor this */",
        "b": [1, 2],
        "c": {"d": 'quote " and ,} inside'},
        "e": "back\\slash",
    }
    blank = jsonc.blanked(TRICKY)
    assert len(blank) == len(TRICKY)
    assert [i for i, c in enumerate(TRICKY) if c == "\n"] == [i for i, c in enumerate(blank) if c == "\n"]


def test_an_edit_changes_only_the_values_it_names() -> None:
    text = (
        '{\n  // mine\n  "servers": {\n    "x": {"command": "a", "env": {}}, // x\n'
        '    "y": {"args": [], "command": "b"},\n  }\n}\n'
    )
    edited = jsonc.edit(
        text, ["servers"], {"x": {"command": "A", "args": ["1"], "env": {}}, "y": {"command": "b"}}, ["command", "args"]
    )
    assert edited == (
        '{\n  // mine\n  "servers": {\n    "x": {"command": "A", "args": ["1"], "env": {}}, // x\n'
        '    "y": {"command": "b"},\n  }\n}\n'
    )


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=12),
            lambda children: (
                st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
            ),
            max_leaves=8,
        ),
        max_size=5,
    ),
    st.sampled_from([None, 2, "\t"]),
)
def test_plain_json_reads_as_json_does(document: dict[str, object], indent: int | str | None) -> None:
    """Strings full of slashes, stars, quotes and commas are never taken for comments."""
    text = json.dumps(document, indent=indent)
    assert jsonc.loads(text) == json.loads(text)
    assert jsonc.blanked(text) == text


def test_an_entry_the_text_does_not_have_is_refused() -> None:
    with pytest.raises(KeyError):
        jsonc.edit('{"servers": {}}', ["servers"], {"x": {"command": "a"}}, ["command"])
