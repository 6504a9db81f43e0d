"""``ctxeval demo``: the main job on the bundled example."""

from __future__ import annotations

from pathlib import Path

import click

from .options import File, shown


@click.command("demo")
@shown(
    "--html",
    "html_path",
    type=File("report", writable=True),
    default="ctxeval-report.html",
    help="where to write the HTML report of the comparison ('' for none)",
)
@shown(
    "--policy",
    "policy_path",
    type=File("policy", writable=True),
    default="ctxeval-policy.json",
    help="where to write the best held-out runtime policy ('' for none)",
)
@click.option(
    "--samples",
    "samples_dir",
    type=click.Path(file_okay=False),
    help="instead: write the RAG guide's two sample sets (bm25.jsonl, dense.jsonl) into this folder",
)
@click.option(
    "--chunking",
    "chunking_dir",
    type=click.Path(file_okay=False),
    help="instead: write the chunking guide's corpus (docs/, questions.jsonl, spans.jsonl) into this folder",
)
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
