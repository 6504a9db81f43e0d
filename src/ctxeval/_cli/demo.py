"""``ctxeval demo``: the main job on the bundled example."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from .options import F, File, shown


def _written(flag: str, dest: str, what: str, default: str, thing: str) -> Callable[[F], F]:
    """A file the demo writes (a ``what`` file, ``default`` unless given; '' for none)."""
    return shown(
        flag, dest, type=File(what, writable=True), default=default, help=f"where to write {thing} ('' for none)"
    )


def _instead(flag: str, dest: str, thing: str) -> Callable[[F], F]:
    """A folder to write ``thing`` into instead of running the demo."""
    return click.option(flag, dest, type=click.Path(file_okay=False), help=f"instead: write {thing} into this folder")


@click.command("demo")
@_written("--html", "html_path", "report", "ctxeval-report.html", "the HTML report of the comparison")
@_written("--policy", "policy_path", "policy", "ctxeval-policy.json", "the best held-out runtime policy")
@_instead("--samples", "samples_dir", "the RAG guide's two sample sets (bm25.jsonl, dense.jsonl)")
@_instead("--chunking", "chunking_dir", "the chunking guide's corpus (docs/, questions.jsonl, spans.jsonl)")
def command(html_path: str, policy_path: str, samples_dir: str | None, chunking_dir: str | None) -> None:
    """Run the main job on the bundled example data set, print a readable report, and write the HTML
    report of the comparison and the best runtime policy. With --samples DIR: write the RAG guide's
    sample sets instead (two pipelines over a corpus of 40 questions whose truth is planted). With
    --chunking DIR: the chunking guide's corpus (40 documents, a fact at a known span in each)."""
    if chunking_dir is not None:
        from .._planted_chunks import write_chunking_corpus

        written = write_chunking_corpus(Path(chunking_dir))
        click.echo(f"wrote {', '.join(str(p) for p in written)} (the chunking guide's corpus)")
        return
    if samples_dir is not None:
        from .._planted import guide_samples

        folder = Path(samples_dir)
        folder.mkdir(parents=True, exist_ok=True)
        written = guide_samples(folder)
        click.echo(f"wrote {', '.join(str(p) for p in written)} (the RAG guide's two pipelines)")
        return
    from .._demo import demo_report

    click.echo(demo_report(html_path or None, policy_path or None), nl=False)
