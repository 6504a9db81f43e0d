"""A griffe extension for the documentation site (mkdocs.yml loads it): the API pages show what
``help(ctxeval.NAME)`` shows, in Markdown.

- A public name's docstring is taken from the imported object (``evaluate`` and ``compare`` set theirs
  at import time, which reading the source cannot see).
- The docstrings are written for ``help()`` with reST roles; here ``:class:`~ctxeval.Qrels``` becomes a
  link to the name's entry when it is public (``ctxeval.__all__``), else code; a paragraph of doctest
  lines (``>>>``) becomes a ``pycon`` code block.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import griffe

import ctxeval

PUBLIC = set(ctxeval.__all__)
_ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc|obj):`(~?)([^`<]+?)\s*(?:<([^`>]+)>)?`")


def _role(match: re.Match[str]) -> str:
    short, target = match.group(1) == "~", (match.group(3) or match.group(2)).strip()
    path = target.removeprefix("ctxeval.")
    shown = match.group(2).strip() if match.group(3) else path.rsplit(".", 1)[-1] if short else path
    if path.split(".", 1)[0] in PUBLIC:
        return f"[`{shown}`][ctxeval.{path}]"
    return f"`{shown}`"


def markdown(text: str) -> str:
    """A docstring written for ``help()`` as Markdown."""
    text = _ROLE.sub(_role, text)
    out: list[str] = []
    block: list[str] = []  # the doctest paragraph being read
    for line in text.split("\n"):
        if block and line.strip():
            block.append(line)
            continue
        if block:
            out += ["```pycon", *block, "```"]
            block = []
        if line.startswith(">>> "):
            if out and out[-1].strip():
                out.append("")
            block = [line]
        else:
            out.append(line)
    if block:
        out += ["```pycon", *block, "```"]
    return "\n".join(out)


class CtxevalDocstrings(griffe.Extension):
    def __init__(self) -> None:
        super().__init__()
        self._done: set[int] = set()

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name != "ctxeval":
            return
        for name in sorted(PUBLIC - {"__version__"}):
            live = getattr(ctxeval, name)
            # the name's definition, as Python sees it (``ctxeval.calibrate`` is the function, not the
            # module ``_calibrate/calibrate.py`` that reading the imports may find first); a verb made by
            # ``_render.reporting`` is its model's definition, returning the report
            made = inspect.unwrap(live)
            path = f"{made.__module__}.{made.__qualname__}"
            if pkg[name].path != path:
                pkg.set_member(name, griffe.Alias(name, path, parent=pkg))
            obj = pkg[name]
            target = obj.final_target if isinstance(obj, griffe.Alias) else obj
            if made is not live:
                report = inspect.signature(live).return_annotation
                where = pkg[live.__module__.removeprefix("ctxeval.")]
                target.returns = griffe.ExprName(report if isinstance(report, str) else report.__name__, where)
            doc = inspect.getdoc(live) or ""
            self._set(target, doc)
            if isinstance(target, griffe.Class):
                for member in target.all_members.values():
                    if isinstance(member, griffe.Alias) and not member.resolved:
                        continue
                    if member.docstring is not None:
                        self._set(member, member.docstring.value)

    def _set(self, obj: Any, doc: str) -> None:
        if doc and id(obj) not in self._done:
            self._done.add(id(obj))
            obj.docstring = griffe.Docstring(markdown(doc), parent=obj, lineno=getattr(obj.docstring, "lineno", None))
