"""Measure documentation generated from the registry (CLI help and the README's measure list)."""

from __future__ import annotations

from .._core.ties import LIMIT
from .._measures import Family, families
from .._measures.base import tie_rule
from .._measures.names import ir_measures_name


def tie_text(fam: Family) -> str:
    """How the family is exact under tied scores (``--ties expected``)."""
    rule = tie_rule(fam.name)
    if rule.how == "closed":
        return f"closed form: {rule.form}"
    if rule.how == "invariant":
        return "the order of tied docs does not change it"
    return f"the exact average of its value over every order of the ties (refused past {LIMIT:,} orders a query)"


def measure_list(fmt: str = "text") -> str:
    out: list[str] = []
    groups: dict[str, list] = {}
    for fam in families():
        groups.setdefault(fam.group, []).append(fam)
    for group, fams in groups.items():
        if fmt == "markdown":
            out.append(f"\n### {group}\n")
            out.append("| measure | definition | parameters | source |")
            out.append("|---|---|---|---|")
            for f in fams:
                params = (
                    "; ".join(
                        f"`{p.name}` (required): {p.doc}" if p.required else f"`{p.name}` = {p.default!r}: {p.doc}"
                        for p in f.params
                    )
                    or "–"
                )
                aliases = f" (aliases: {', '.join(f.aliases)})" if f.aliases else ""
                irm = ir_measures_name(f.name)
                irm_text = f" (ir_measures: `{irm}`)" if irm else ""
                out.append(
                    f"| `{f.signature()}`{irm_text}{aliases} | {f.summary}: {f.formula}. Tied scores: {tie_text(f)} "
                    f"| {params} | {f.citation} |"
                )
        else:
            out.append(f"[{group}]")
            for f in fams:
                irm = ir_measures_name(f.name)
                out.append(f"  {f.signature()}" + (f"    ir_measures: {irm}" if irm else ""))
                out.append(f"      {f.summary}. {f.formula}")
                for p in f.params:
                    out.append(f"      {p.name} ({'required' if p.required else f'default {p.default!r}'}): {p.doc}")
                if f.aliases:
                    out.append(f"      aliases: {', '.join(f.aliases)}")
                out.append(f"      tied scores: {tie_text(f)}")
                out.append(f"      source: {f.citation}")
            out.append("")
    return "\n".join(out).lstrip("\n") + "\n"
