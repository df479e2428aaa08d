"""Writes each language's names module from spec/names.yaml: ``python spec/generate.py``.

``--check`` writes nothing: it exits 1 and names every generated file that differs from what the
spec gives (CI and the stale tests of each language say to run this command then).

The spec is read once into a small model (sections of :class:`Name` and :class:`EnumType`); one
:class:`Emitter` per language turns the model into that language's module. A language is one more
Emitter subclass and one more entry in :data:`EMITTERS` (spec/README.md). Each
generated file starts with the spec's sha256, which each language's own test recomputes from
spec/names.yaml (no other language's toolchain needed). Stdlib and PyYAML only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec" / "names.yaml"
SPEC_NAME = "spec/names.yaml"
LANGUAGES = ("python", "typescript", "go", "rust")
# The packages whose settings table names each variable (Go takes options and reads none).
NAMED_SETTINGS = frozenset({"typescript"})
# The value kinds a constant can have; the spec says it with `type` where the value alone does not.
KINDS = ("string", "int", "double[]", "string[]", "string_set", "int_set")
# Words Go spells in capitals inside a CamelCase name (Go's initialisms, and ours).
GO_INITIALISMS = frozenset({"AI", "ID", "JSONRPC", "MCP", "OK", "RPC", "TCP", "URI", "URL"})


@dataclass(frozen=True)
class Name:
    """One constant: its name in the spec (``const``), its value and which languages define it."""

    const: str
    value: Any
    kind: str
    brief: str
    go: str
    languages: frozenset[str]


@dataclass(frozen=True)
class Member:
    id: str
    value: str
    brief: str

    @property
    def const(self) -> str:
        return self.id.upper()


@dataclass(frozen=True)
class EnumType:
    """An enum attribute's values as a type of their own (``Outcome``, ``ErrorType`` ...).

    ``kind`` "enum" is a Python ``str`` Enum; "namespace" a plain class of constants (``ErrorType``:
    its values are a few of an open set of strings)."""

    name: str
    kind: str
    go_prefix: str
    brief: str
    members: tuple[Member, ...]
    languages: frozenset[str]
    # Python only: another name for the same class, and why it is kept.
    python_alias: str | None = None
    python_alias_brief: str = ""

    def go_member(self, member: Member) -> str:
        return self.go_prefix + go_camel(member.id)


@dataclass
class Section:
    brief: str
    items: list[Name | EnumType] = field(default_factory=list)


@dataclass
class Spec:
    sha256: str
    sections: list[Section]

    def items(self, language: str) -> Iterable[tuple[Section, list[Name | EnumType]]]:
        """Each section with the items ``language`` defines (sections left empty skipped)."""
        for section in self.sections:
            items = [item for item in section.items if language in item.languages]
            if items:
                yield section, items


def go_camel(snake: str) -> str:
    """``MCP_METHOD_NAME`` -> ``MCPMethodName``, ``input_required`` -> ``InputRequired``."""
    words = snake.upper().split("_")
    return "".join(word if word in GO_INITIALISMS else word.capitalize() for word in words)


def languages_of(entry: dict[str, Any], default: Iterable[str] = LANGUAGES) -> frozenset[str]:
    languages = frozenset(entry.get("languages", default))
    unknown = languages - set(LANGUAGES)
    if unknown:
        raise ValueError(f"{entry}: unknown languages {sorted(unknown)}")
    return languages


def one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def kind_of(entry: dict[str, Any]) -> str:
    kind: str = entry.get("type") or ("int" if isinstance(entry["value"], int) else "string")
    if kind not in KINDS:
        raise ValueError(f"{entry['const']}: type {kind!r} is none of {KINDS}")
    return kind


def load(path: Path = SPEC) -> Spec:
    """The spec's model: its groups' attributes and metrics, its values, its enums (in that order)."""
    raw = path.read_bytes()
    doc = yaml.safe_load(raw)
    sections: list[Section] = []
    enums = Section("The values of the enum attributes, as types of their own.")
    metrics = Section("Metric instruments (semantic-conventions-genai model/mcp/metrics.yaml; mcp_otel.* ours).")
    for group in doc["groups"]:
        if group["type"] == "metric":
            note = group["annotations"]["mcp_otel"]
            brief = one_line(group["brief"])
            metrics.items.append(
                Name(note["const"], group["metric_name"], "string", brief, go_of(note), languages_of(note))
            )
            continue
        section = Section(one_line(group["brief"]))
        for attribute in group["attributes"]:
            note = attribute["annotations"]["mcp_otel"]
            languages = languages_of(note)
            section.items.append(
                Name(note["const"], attribute["id"], "string", one_line(attribute["brief"]), go_of(note), languages)
            )
            if "enum" in note:
                enums.items.append(enum_of(attribute, note["enum"], languages))
        sections.append(section)
    sections.append(metrics)
    known: dict[str, Name] = {}
    for block in doc["mcp_otel"]["values"]:
        section = Section(one_line(block["brief"]))
        for entry in block["names"]:
            languages = languages_of(entry, languages_of(block))
            kind = kind_of(entry)
            value = entry["value"] if "from" not in entry else derived(entry["from"], known)
            name = Name(entry["const"], value, kind, one_line(entry.get("brief")), go_of(entry), languages)
            known[name.const] = name
            section.items.append(name)
        sections.append(section)
    sections.append(enums)
    sections.append(settings_of(doc["mcp_otel"]["settings"]))
    spec = Spec(hashlib.sha256(raw).hexdigest(), sections)
    validate(spec, doc)
    return spec


def settings_of(settings: dict[str, Any]) -> Section:
    """The environment variables of the settings, for the packages that name them one by one
    (TypeScript: its settings table reads these; Python builds each from its setting's name)."""
    section = Section("The environment variables of the settings (a keyword argument or option wins over them).")
    for entry in settings["list"]:
        languages = languages_of(entry) & NAMED_SETTINGS
        if not languages:
            continue
        const, own = "ENV_" + entry["name"].upper(), settings["prefix"] + entry["name"].upper()
        section.items.append(Name(const, own, "string", one_line(entry["brief"]), go_camel(const), languages))
        fallbacks = entry.get("fallback_variables", [])
        if len(fallbacks) > 1:
            raise ValueError(f"{entry['name']}: one fallback variable at most (ENV_<NAME>_FALLBACK)")
        for fallback in fallbacks:
            section.items.append(
                Name(
                    const + "_FALLBACK",
                    fallback,
                    "string",
                    f"Read when {own} is unset.",
                    go_camel(const + "_FALLBACK"),
                    languages,
                )
            )
    return section


def go_of(note: dict[str, Any]) -> str:
    return str(note.get("go") or go_camel(note["const"]))


def enum_of(attribute: dict[str, Any], note: dict[str, Any], languages: frozenset[str]) -> EnumType:
    alias = note.get("python_alias", {})
    members = tuple(
        Member(member["id"], member["value"], one_line(member.get("brief"))) for member in attribute["type"]["members"]
    )
    return EnumType(
        note["name"],
        note.get("kind", "enum"),
        note["go_prefix"],
        one_line(note["brief"]),
        members,
        languages,
        alias.get("name"),
        one_line(alias.get("brief")),
    )


def derived(source: str, known: dict[str, Name]) -> tuple[str, ...]:
    """The one derivation the spec names: a code set as its status-code texts, highest first."""
    return tuple(str(code) for code in sorted(known[source].value, reverse=True))


def validate(spec: Spec, doc: dict[str, Any]) -> None:
    """Every identifier defined once in each language; metric buckets naming a list of numbers; the
    histograms in DURATION_UNIT (the Prometheus names take seconds)."""
    for emitter in EMITTERS:
        seen: set[str] = set()
        for _, items in spec.items(emitter.language):
            for name in (identifier for item in items for identifier in emitter.identifiers(item)):
                if name in seen:
                    raise ValueError(f"{name} is defined twice in {emitter.path}")
                seen.add(name)
    values = {item.const: item for section in spec.sections for item in section.items if isinstance(item, Name)}
    for group in doc["groups"]:
        buckets = group.get("annotations", {}).get("mcp_otel", {}).get("bucket_boundaries")
        if buckets is not None and values[buckets].kind != "double[]":
            raise ValueError(f"{group['id']}: bucket_boundaries {buckets} is not a double[] constant")
        if (
            group["type"] == "metric"
            and group["instrument"] == "histogram"
            and group["unit"] != values["DURATION_UNIT"].value
        ):
            raise ValueError(f"{group['id']}: unit {group['unit']} is not DURATION_UNIT")


def wrap(text: str, prefix: str, width: int = 100) -> list[str]:
    """``text`` as comment lines, each starting with ``prefix``."""
    if not text:
        return []
    return textwrap.wrap(text, width=width, initial_indent=prefix, subsequent_indent=prefix, break_on_hyphens=False)


def heading(brief: str, prefix: str, width: int = 100) -> list[str]:
    """A section's comment: its first sentence as ``--- title ---``, the rest below it."""
    title, _, rest = brief.partition(". ")
    return [f"{prefix}--- {title.rstrip('.')} ---", *wrap(rest, prefix, width)]


class Emitter:
    """One language's names module. Subclasses say how a header, a section, a constant and an enum
    look in their language; :meth:`render` puts them together in the spec's order."""

    language: str
    path: str
    width = 120  # code lines up to this long stay on one line
    comments = 100  # comments wrap here

    def render(self, spec: Spec) -> str:
        parts = [self.header(spec)]
        for section, items in spec.items(self.language):
            parts.append(self.section(section, items))
        parts.append(self.footer())
        return "\n".join(part for part in parts if part).rstrip("\n") + "\n"

    def identifiers(self, item: Name | EnumType) -> list[str]:
        """The top-level identifiers ``item`` defines in this language."""
        return [item.name] if isinstance(item, EnumType) else [item.const]

    def header(self, spec: Spec) -> str:
        raise NotImplementedError

    def section(self, section: Section, items: list[Name | EnumType]) -> str:
        raise NotImplementedError

    def footer(self) -> str:
        return ""

    def braced_section(
        self, section: Section, items: list[Name | EnumType], doc: str, brief: Callable[[Name], str]
    ) -> str:
        """A section as the brace languages write it (TypeScript, Rust): the section's heading,
        each constant under its doc comment (``doc`` its start, ``brief`` its text), each enum
        after a blank line."""
        lines = [] if isinstance(items[0], EnumType) else heading(section.brief, "// ", self.comments)
        for item in items:
            if isinstance(item, EnumType):
                lines.extend([*([""] if item is not items[0] else []), *self.enum(item)])
            else:
                lines.extend(wrap(brief(item), doc, self.comments))
                lines.extend(self.const(item))
        return "\n".join(lines) + "\n"

    def const(self, name: Name) -> list[str]:
        raise NotImplementedError

    def enum(self, enum: EnumType) -> list[str]:
        raise NotImplementedError

    @staticmethod
    def stamp(comment: str, spec: Spec) -> str:
        """The first lines of every generated file: where it came from, and the spec's sha256."""
        return (
            f"{comment} Generated by spec/generate.py from {SPEC_NAME}; do not edit"
            " (spec/README.md: how to add a name).\n"
            f"{comment} {SPEC_NAME} sha256 {spec.sha256}\n"
        )


class PythonEmitter(Emitter):
    language = "python"
    path = "src/mcp_otel/semconv.py"
    # 120 is ruff's line length: the output is ruff-format clean as written.

    def header(self, spec: Spec) -> str:
        return (
            self.stamp("#", spec)
            + '''"""Every name and value mcp-otel writes: attribute names, metric names, outcome values.

This is the single source of these strings in Python; instrumentation code, tests, the collector
configuration and the dashboards all take them from here (docs/decisions.md rule 3: one string
travels end to end). The TypeScript and Go names modules are generated from the same spec, whose
header says the sources the names are pinned to (semantic-conventions-genai ``docs/gen-ai/mcp.md``
@4172e394, semantic-conventions v1.44.0).

We do not import ``opentelemetry.semconv._incubating``: its MCP names are deprecated there
("moved to the GenAI repository") and the module path is private.
"""

from __future__ import annotations

from enum import Enum
from typing import Final
'''
        )

    def section(self, section: Section, items: list[Name | EnumType]) -> str:
        # Classes need no heading (their docstrings say what they hold) and two blank lines around.
        lines = [] if isinstance(items[0], EnumType) else heading(section.brief, "# ", self.comments)
        for item in items:
            if isinstance(item, EnumType):
                lines.extend([*([""] if item is not items[0] else []), "", *self.enum(item)])
            else:
                lines.extend(wrap(item.brief, "# ", self.comments))
                lines.extend(self.assign(f"{item.const}: Final = ", item))
        return "\n".join(lines) + "\n"

    def assign(self, lhs: str, name: Name) -> list[str]:
        """``lhs`` and the value, laid out as ruff format lays it out (hugged, then one per line)."""
        if name.kind in ("string", "int"):
            line = lhs + py_literal(name.value)
            if len(line) <= self.width:
                return [line]
            return [lhs + "(", "    " + py_literal(name.value), ")"]  # as ruff format parenthesizes it
        items = [py_literal(value) for value in name.value]
        opener, closer = {
            "double[]": ("(", ")"),
            "string[]": ("(", ")"),
            "string_set": ("frozenset({", "})"),
            "int_set": ("frozenset({", "})"),
        }[name.kind]
        flat = ", ".join(items)
        if len(lhs) + len(opener) + len(flat) + len(closer) <= self.width:
            return [lhs + opener + flat + closer]
        if name.kind.endswith("_set"):  # a call of one argument: ruff hugs the set first
            if 6 + len(flat) <= self.width:
                return [lhs + "frozenset(", "    {" + flat + "}", ")"]
            return [lhs + "frozenset(", "    {", *(f"        {item}," for item in items), "    }", ")"]
        return [lhs + "(", *(f"    {item}," for item in items), ")"]

    def enum(self, enum: EnumType) -> list[str]:
        base = "(str, Enum)" if enum.kind == "enum" else ""
        lines = [f"class {enum.name}{base}:", *py_docstring(enum.brief, "    ", self.width), ""]
        for member in enum.members:
            lines.extend(wrap(member.brief, "    # ", self.comments))
            if enum.kind == "enum":
                lines.append(f"    {member.const} = {py_literal(member.value)}")
            else:
                lines.append(f"    {member.const}: Final = {py_literal(member.value)}")
        if enum.python_alias:
            lines.extend(["", "", *wrap(enum.python_alias_brief, "# ", self.comments)])
            lines.append(f"{enum.python_alias} = {enum.name}")
        return lines

    def footer(self) -> str:
        # Functions, not names: kept here so that ``semconv.prometheus_label`` stays where callers
        # import it from; they derive names from names, so they belong with them.
        return '''
def prometheus_label(attribute: str) -> str:
    """An attribute's Prometheus label name (the collector's and Tempo's sanitising: "." -> "_")."""
    return attribute.replace(".", "_")


def prometheus_histogram(metric: str, suffix: str) -> str:
    """A histogram's Prometheus series name (unit DURATION_UNIT, seconds): ``_bucket|_count|_sum``."""
    return f"{prometheus_label(metric)}_seconds_{suffix}"
'''


def py_literal(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def py_docstring(text: str, indent: str, width: int) -> list[str]:
    one = f'{indent}"""{text}"""'
    if len(one) <= width:
        return [one]
    lines = textwrap.wrap(text, width=100 - len(indent), break_on_hyphens=False)
    lines[0] = '"""' + lines[0]
    lines[-1] += '"""'
    return [indent + line for line in lines]


class TypeScriptEmitter(Emitter):
    language = "typescript"
    path = "node/src/semconv.ts"

    def header(self, spec: Spec) -> str:
        return (
            self.stamp("//", spec)
            + """/**
 * Every name and value mcp-otel writes: attribute names, metric names, outcome values.
 *
 * The same strings as the Python package's `src/mcp_otel/semconv.py`, under the same constant
 * names, both generated from the same spec (docs/decisions.md rule 3: one string travels end to
 * end, whatever language wrote the span).
 */
"""
        )

    def section(self, section: Section, items: list[Name | EnumType]) -> str:
        return self.braced_section(section, items, "// ", lambda name: name.brief)

    def const(self, name: Name) -> list[str]:
        if name.kind in ("string", "int"):
            return [f"export const {name.const} = {ts_literal(name.value)};"]
        items = [ts_literal(value) for value in name.value]
        declared, opener, closer = {
            "double[]": ("readonly number[]", "[", "]"),
            "string[]": ("readonly string[]", "[", "]"),
            "string_set": ("ReadonlySet<string>", "new Set([", "])"),
            "int_set": ("ReadonlySet<number>", "new Set([", "])"),
        }[name.kind]
        lhs = f"export const {name.const}: {declared} = "
        flat = ", ".join(items)
        if len(lhs) + len(opener) + len(flat) + len(closer) + 1 <= self.width:
            return [f"{lhs}{opener}{flat}{closer};"]
        return [lhs + opener, *(f"  {item}," for item in items), closer + ";"]

    def enum(self, enum: EnumType) -> list[str]:
        brief = enum.brief.replace("``", "`")
        one = f"/** {brief} */"
        lines = [one] if len(one) <= self.comments else ["/**", *wrap(brief, " * ", self.comments), " */"]
        lines.append(f"export const {enum.name} = {{")
        for member in enum.members:
            lines.extend(wrap(member.brief, "  // ", self.comments))
            lines.append(f"  {member.const}: {ts_literal(member.value)},")
        lines.append("} as const;")
        lines.append(f"export type {enum.name} = (typeof {enum.name})[keyof typeof {enum.name}];")
        return lines


def ts_literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


class GoEmitter(Emitter):
    """Go's names module: the names in CamelCase (``go`` in the spec where that is not it), enum
    members as constants with their type's prefix (``OutcomeOK``), sets of the hand-written
    ``sets.go``'s types."""

    language = "go"
    path = "go/internal/semconv/semconv.go"

    def header(self, spec: Spec) -> str:
        return f"""// Code generated by spec/generate.py from {SPEC_NAME}; DO NOT EDIT.
// {SPEC_NAME} sha256 {spec.sha256}
// spec/README.md says how to add a name.

// Package semconv holds every name and value mcp-otel writes: attribute names, metric names,
// outcome values.
//
// They are the strings of the Python package's src/mcp_otel/semconv.py, generated from the same
// spec (docs/decisions.md rule 3: one string travels end to end, whatever language wrote the span).
package semconv
"""

    def identifiers(self, item: Name | EnumType) -> list[str]:
        return [item.go_member(member) for member in item.members] if isinstance(item, EnumType) else [item.go]

    def section(self, section: Section, items: list[Name | EnumType]) -> str:
        out: list[str] = []
        consts = [item for item in items if isinstance(item, Name) and item.kind in ("string", "int")]
        if consts:
            out.extend(["", *heading(section.brief, "// ", self.comments), "const ("])
            out.extend(
                go_block(
                    [(wrap(name.brief, "\t// ", self.comments), name.go, go_literal(name.value)) for name in consts]
                )
            )
            out.append(")")
        for item in items:
            if isinstance(item, EnumType):
                # (gofmt turns a doc comment's ``x`` into typographic quotes: plain names here.)
                brief = item.brief.replace("``", "")
                out.extend(["", *wrap(f"{item.name} values: {brief}", "// ", self.comments), "const ("])
                out.extend(
                    go_block(
                        [
                            (
                                wrap(member.brief, "\t// ", self.comments),
                                item.go_member(member),
                                go_literal(member.value),
                            )
                            for member in item.members
                        ]
                    )
                )
                out.append(")")
            elif item.kind not in ("string", "int"):
                out.extend(["", *wrap(f"{item.go}: {item.brief or section.brief}", "// ", self.comments)])
                out.extend(self.var(item))
        return "\n".join(out[1:]) + "\n"  # (the blank line before a section is render's)

    def var(self, name: Name) -> list[str]:
        items = [go_literal(value) for value in name.value]
        opener, closer = {
            "double[]": ("[]float64{", "}"),
            "string[]": ("[]string{", "}"),
            "string_set": ("set(", ")"),
            "int_set": ("codes(", ")"),
        }[name.kind]
        lhs = f"var {name.go} = "
        flat = ", ".join(items)
        if len(lhs) + len(opener) + len(flat) + len(closer) <= self.width:
            return [lhs + opener + flat + closer]
        return [lhs + opener, *(f"\t{item}," for item in items), closer]


def go_block(entries: Sequence[tuple[list[str], str, str]]) -> list[str]:
    """A const block's lines as gofmt aligns them: ``=`` in one column per run of lines that no
    comment line interrupts."""
    lines: list[str] = []
    run: list[tuple[str, str]] = []

    def flush() -> None:
        width = max((len(name) for name, _ in run), default=0)
        lines.extend(f"\t{name.ljust(width)} = {value}" for name, value in run)
        run.clear()

    for comment, name, value in entries:
        if comment:
            flush()
            lines.extend(comment)
        run.append((name, value))
    flush()
    return lines


def go_literal(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


class RustEmitter(Emitter):
    """Rust's names module: constants named as ``const`` says, ``enum`` kinds as Rust enums with
    ``as_str`` (the string on spans and points), ``namespace`` kinds as a module of constants, sets
    as slices. lib.rs declares it ``#[rustfmt::skip]``: this layout is the generator's."""

    language = "rust"
    path = "rust/src/semconv.rs"

    def header(self, spec: Spec) -> str:
        return (
            self.stamp("//", spec)
            + """
//! Every name and value mcp-otel writes: attribute names, metric names, outcome values.
//!
//! The same strings as the Python package's `src/mcp_otel/semconv.py`, under the same constant
//! names, all generated from one spec (docs/decisions.md rule 3: one string travels end to end,
//! whatever language wrote the span).
"""
        )

    def identifiers(self, item: Name | EnumType) -> list[str]:
        if isinstance(item, EnumType):
            return [rust_module(item.name) if item.kind == "namespace" else item.name]
        return [item.const]

    def section(self, section: Section, items: list[Name | EnumType]) -> str:
        # Every public constant has a doc comment (missing_docs): its value when the spec has none.
        return self.braced_section(section, items, "/// ", lambda name: name.brief or f"`{name.value}`")

    def const(self, name: Name) -> list[str]:
        declared = {
            "string": "&str",
            "int": "i64",
            "double[]": "&[f64]",
            "string[]": "&[&str]",
            "string_set": "&[&str]",
            "int_set": "&[i64]",
        }[name.kind]
        lhs = f"pub const {name.const}: {declared} = "
        if name.kind in ("string", "int"):
            return [f"{lhs}{rust_literal(name.value)};"]
        items = [rust_literal(value) for value in name.value]
        flat = ", ".join(items)
        if len(lhs) + len(flat) + 4 <= 100:
            return [f"{lhs}&[{flat}];"]
        return [lhs + "&[", *(f"    {item}," for item in items), "];"]

    def enum(self, enum: EnumType) -> list[str]:
        brief = enum.brief.replace("``", "`")
        lines = wrap(brief, "/// ", self.comments)
        if enum.kind == "namespace":
            lines.append(f"pub mod {rust_module(enum.name)} {{")
            for member in enum.members:
                lines.extend(wrap(member.brief or f"`{member.value}`", "    /// ", self.comments))
                lines.append(f"    pub const {member.const}: &str = {rust_literal(member.value)};")
            return [*lines, "}"]
        variants = [(rust_variant(member.id), member) for member in enum.members]
        lines.extend(["#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]", f"pub enum {enum.name} {{"])
        for variant, member in variants:
            lines.extend(wrap(member.brief or f"`{member.value}`", "    /// ", self.comments))
            lines.append(f"    {variant},")
        lines.extend(
            [
                "}",
                "",
                f"impl {enum.name} {{",
                "    /// Every value, in the spec's order.",
                f"    pub const ALL: [Self; {len(variants)}] = [{', '.join('Self::' + v for v, _ in variants)}];",
                "",
                "    /// The value as spans and points carry it.",
                "    #[must_use]",
                "    pub const fn as_str(self) -> &'static str {",
                "        match self {",
                *(f"            Self::{variant} => {rust_literal(member.value)}," for variant, member in variants),
                "        }",
                "    }",
                "}",
            ]
        )
        return lines


def rust_variant(snake: str) -> str:
    """``input_declined`` -> ``InputDeclined``."""
    return "".join(word.capitalize() for word in snake.split("_"))


def rust_module(camel: str) -> str:
    """``ErrorType`` -> ``error_type``."""
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(camel))


def rust_literal(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        return repr(value)
    return str(value)


# Every language's names module: a new language is one more Emitter here.
EMITTERS: tuple[Emitter, ...] = (PythonEmitter(), TypeScriptEmitter(), GoEmitter(), RustEmitter())


def generate(spec: Spec | None = None) -> dict[str, str]:
    """Each generated file's path (from the repository's top) and its text."""
    spec = spec or load()
    return {emitter.path: emitter.render(spec) for emitter in EMITTERS}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming the stale files")
    args = parser.parse_args(argv)
    files = generate()
    stale = [path for path, text in files.items() if not (ROOT / path).exists() or (ROOT / path).read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path} is stale: run python spec/generate.py", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        (ROOT / path).write_text(files[path])
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
