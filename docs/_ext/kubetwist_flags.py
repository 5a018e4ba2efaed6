"""
A Sphinx directive, ``kubetwist-flags``, writing the flags reference from
``kubetwist.tap.Options`` (names, defaults and help texts, grouped as ``twistd kubeapi --help``
groups them), so the reference cannot drift from the code.
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import Directive


def _groups() -> list[tuple[str, list[list]]]:
    from kubetwist.tap import _GROUPS, Options

    by_name = {p[0]: p for p in Options.optParameters}
    out, seen = [], set()
    for title, names in _GROUPS:
        rows = [by_name[n] for n in names if n in by_name]
        seen.update(names)
        out.append((title, rows))
    rest = [p for n, p in sorted(by_name.items()) if n not in seen]
    if rest:
        out.append(("Other flags", rest))
    return out


def _flag(param: list) -> str:
    long_name, short = param[0], param[1]
    return f"-{short}, --{long_name}" if short else f"--{long_name}"


class FlagsDirective(Directive):
    """``.. kubetwist-flags::``: one section per group, a definition list of its flags."""

    has_content = False

    def run(self) -> list:
        out = []
        for title, rows in _groups():
            section = nodes.section(ids=[nodes.make_id("flags-" + title)])
            section += nodes.title(text=title)
            items = nodes.definition_list()
            for param in rows:
                item = nodes.definition_list_item()
                term = nodes.term()
                term += nodes.literal(text=_flag(param))
                default = param[2]
                if default not in (None, ""):
                    term += nodes.Text(" (default ")
                    term += nodes.literal(text=str(default))
                    term += nodes.Text(")")
                item += term
                definition = nodes.definition()
                definition += nodes.paragraph(text=" ".join(str(param[3]).split()))
                item += definition
                items += item
            section += items
            out.append(section)
        return out


def setup(app: object) -> dict:
    app.add_directive("kubetwist-flags", FlagsDirective)  # type: ignore[attr-defined]
    return {"parallel_read_safe": True, "parallel_write_safe": True}
