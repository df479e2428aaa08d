"""JSON with comments (the settings files of Zed and VS Code), read and edited in place.

:func:`loads` reads JSON with ``//`` and ``/* */`` comments and trailing commas. :func:`edit`
writes a changed document back as the original text with only the changed members' values
replaced, inserted or removed: comments, order, indentation and every other byte stay.

Both rest on :func:`blanked`: the text with its comments and trailing commas turned into
spaces (newlines kept), so that every offset in it is the original's. The stdlib's decoder then
parses it (``json.loads``) and finds where each value ends (``raw_decode``); no JSONC library
in Python keeps comments through an edit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"\s*")


def _skip(text: str, i: int) -> int:
    """Past the whitespace at ``text[i]``."""
    found = _SPACE.match(text, i)
    return found.end() if found else i


def _string_end(text: str, i: int) -> int:
    """Where the string opened by the quote at ``text[i]`` closes (escapes skipped)."""
    i += 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i


def blanked(text: str) -> str:
    """``text`` with comments and trailing commas as spaces (newlines kept), strings untouched."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':
            i = _string_end(text, i)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = [c if c == "\n" else " " for c in text[i:end]]
            i = end
            continue
        i += 1
    text = "".join(out)
    i = 0
    while i < n:  # trailing commas, now that comments are spaces
        if text[i] == '"':
            i = _string_end(text, i)
        elif text[i] == ",":
            after = _skip(text, i + 1)
            if text[after : after + 1] in ("}", "]"):
                out[i] = " "
        i += 1
    return "".join(out)


def loads(text: str) -> Any:
    return json.loads(blanked(text))


class _Member:
    __slots__ = ("key_start", "value_end", "value_start")

    def __init__(self, key_start: int, value_start: int, value_end: int) -> None:
        self.key_start, self.value_start, self.value_end = key_start, value_start, value_end


def _members(text: str, start: int) -> dict[str, _Member]:
    """The members of the object at ``text[start]`` (blanked, valid JSON), in order."""
    members: dict[str, _Member] = {}
    i = _skip(text, start + 1)
    while text[i] != "}":
        key, after_key = _DECODER.raw_decode(text, i)
        value_start = _skip(text, _skip(text, after_key) + 1)  # past the colon
        _, value_end = _DECODER.raw_decode(text, value_start)
        members[key] = _Member(i, value_start, value_end)
        i = _skip(text, value_end)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return members


def _dumped(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def edit(text: str, path: Sequence[str], entries: Mapping[str, Mapping[str, Any]], fields: Sequence[str]) -> str:
    """``text`` with, in the object at ``path``, each of ``entries`` (by key: the entry as it is
    now) given its ``fields`` as they are now: a value replaced, a member inserted after the
    entry's first field, or removed. Raises ``ValueError`` if the result would not read back as
    the edit asked (nothing is then written)."""
    blank = blanked(text)
    start = _skip(blank, 0)
    holder = _DECODER.raw_decode(blank, start)[0]
    for key in path:
        start = _members(blank, start)[key].value_start
        holder = holder[key]
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), not overlapping
    servers = _members(blank, start)
    for name, entry in entries.items():
        members = _members(blank, servers[name].value_start)
        before = holder[name]
        order = list(members)
        for field in fields:
            if field in entry and field in members:
                if entry[field] != before[field]:
                    member = members[field]
                    edits.append((member.value_start, member.value_end, _dumped(entry[field])))
            elif field in entry:  # a new member, after the entry's first field
                anchor = members[fields[0]].value_end
                edits.append((anchor, anchor, f", {_dumped(field)}: {_dumped(entry[field])}"))
            elif field in members:  # a member gone: with the comma before it (or, first, after it)
                member, place = members[field], order.index(field)
                if place:
                    edits.append((members[order[place - 1]].value_end, member.value_end, ""))
                else:
                    after = order[1] if len(order) > 1 else None
                    edits.append((member.key_start, members[after].key_start if after else member.value_end, ""))
    result = text
    for edit_start, edit_end, replacement in sorted(edits, reverse=True):
        result = result[:edit_start] + replacement + result[edit_end:]
    if loads(result) != _expected(loads(text), path, entries, fields):
        raise ValueError("the edited text does not read back as the edit")
    return result


def _expected(
    document: Any, path: Sequence[str], entries: Mapping[str, Mapping[str, Any]], fields: Sequence[str]
) -> Any:
    holder = document
    for key in path:
        holder = holder[key]
    for name, entry in entries.items():
        for field in fields:
            if field in entry:
                holder[name][field] = entry[field]
            else:
                holder[name].pop(field, None)
    return document
