"""The chunking report for people: the public :class:`ChunkingReport` (the model of
:mod:`ctxeval._chunking` with its text, Markdown, JSON and HTML formats and a plot) and :func:`chunking`,
which returns one. Deterministic bytes; never recomputes a figure."""

from __future__ import annotations

import json
import math
from typing import Any

from .._chunking import ChunkingModel
from .._chunking import chunking as chunking_model
from .._show import html_table, pyplot
from . import reporting
from .html.page import render_html
from .report_parts import fmt

__all__ = ["ChunkingReport", "chunking"]


def _f(x: float | None, digits: int = 4) -> str:
    return "NA" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt(x, digits)


class ChunkingReport(ChunkingModel):
    """What :func:`ctxeval.chunking` found: ``answer`` (the headline), ``verdicts`` (per budget: the
    chunker that beats every other significantly, or "cannot tell" and why), ``chunkers`` (chunks, mean
    tokens, precision_Omega, the means over the budgets, the equal-K view), ``at_k``, ``comparisons``,
    ``settings``, ``notes``; with its formats: ``str()`` (the terminal table), :meth:`to_markdown`,
    :meth:`to_json`, :meth:`to_html`, :meth:`plot`."""

    @classmethod
    def of(cls, model: ChunkingModel) -> ChunkingReport:
        return cls(**{f: getattr(model, f) for f in model.__dataclass_fields__})

    def _table(self) -> tuple[list[str], list[list[str]]]:
        head = [
            "chunker",
            "chunks",
            "tokens/chunk",
            "P_Omega",
            *(f"@{b}tok" for b in self.budgets),
            f"@{self.k}",
            f"tokens@{self.k}",
        ]
        winners = {v.budget: v.winner for v in self.verdicts}
        rows = []
        for c in self.chunkers:
            cells = [c.name, str(c.chunks), f"{c.mean_tokens:.1f}", _f(c.precision_omega)]
            cells += [_f(v) + (" *" if winners.get(b) == c.name else "") for b, v in zip(self.budgets, c.curve)]
            cells += [_f(c.at_k), f"{c.tokens_at_k:.0f}"]
            rows.append(cells)
        return head, rows

    def to_text(self) -> str:
        head, rows = self._table()
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]

        def line(cells: list[str]) -> str:
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

        st = self.settings
        out = [
            f"Which chunker at which budget: {self.measure}@Btok over {st.get('questions')} questions, "
            f"{st.get('documents')} documents; retriever {st.get('retriever')}; tokens counted by {st.get('tokenizer')}",
            "",
            f"answer: {self.answer}",
            "",
            line(head),
            *(line(r) for r in rows),
            f"* significantly ahead of every other chunker at that budget ({st.get('test')}, {st.get('correction')} over "
            f"{st.get('tests_in_family')} tests, alpha {st.get('alpha')}); P_Omega: precision_Omega, the best IoU "
            "the chunking allows any retriever",
            "",
            "by budget:",
            *(f"  {v.text}" for v in self.verdicts),
            "",
            f"equal K: {self.at_k}",
        ]
        sp = ["", "SpanPrecision / SpanIoU at each budget:"]
        for c in self.chunkers:
            pairs = ", ".join(f"{b}: {_f(p, 3)} / {_f(i, 3)}" for b, p, i in zip(self.budgets, c.precision, c.iou))
            sp.append(f"  {c.name}: {pairs}")
        out += sp
        if self.notes:
            out += ["", *(f"note: {n}" for n in self.notes)]
        return "\n".join(out) + "\n"

    __str__ = to_text

    def to_markdown(self) -> str:
        head, rows = self._table()

        def esc(s: str) -> str:
            return s.replace("|", "\\|").replace("*", "\\*")

        out = [f"**{esc(self.answer)}**", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
        out += ["", *(f"- {esc(v.text)}" for v in self.verdicts), "", f"Equal K: {esc(self.at_k)}"]
        out += ["", *(f"- note: {esc(n)}" for n in self.notes)] if self.notes else []
        return "\n".join(out) + "\n"

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    def to_html(self) -> str:
        """One self-contained page (the comparison report's: summary, differences, per-query differences),
        the answer on top and the curves over the budgets. Needs the ``report`` extra (matplotlib)."""
        doc = dict(self.report)
        doc["pr_curves"] = None
        doc["curves"] = {
            "ks": list(self.budgets),
            "axis": "tokens",
            "series": [{"run": c.name, "measure": self.measure, "values": list(c.curve)} for c in self.chunkers],
        }
        doc["decision"] = [
            f"Answer: {self.answer}",
            *(v.text for v in self.verdicts),
            f"Equal K: {self.at_k}",
            *(f"{c.name}: {c.chunks} chunks of {c.mean_tokens:.1f} tokens on average; precision_Omega "
              f"{_f(c.precision_omega)}" for c in self.chunkers),
        ]  # fmt: skip
        return render_html(doc)

    def _repr_html_(self) -> str:
        head, rows = self._table()
        return html_table(head, rows, self.answer)

    def plot(self, ax: Any = None) -> Any:
        """Each chunker's mean of the measure against the budget (tokens), on matplotlib ``ax`` (default:
        a new figure). Returns the axes. Needs the ``report`` extra."""
        plt = pyplot("ChunkingReport.plot")
        if ax is None:
            _, ax = plt.subplots()
        for c in self.chunkers:
            ax.plot(list(self.budgets), [math.nan if v is None else v for v in c.curve], marker="o", label=c.name)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(f"budget (tokens, {self.settings.get('tokenizer')})")
        ax.set_ylabel(f"{self.measure}@Btok")
        ax.legend()
        return ax


chunking = reporting(chunking_model, ChunkingReport.of, "ChunkingReport", __name__)
