"""``ctxeval demo``: the main job on the bundled example."""

from __future__ import annotations

import click


@click.command("demo")
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, writable=True),
    default="ctxeval-report.html",
    show_default=True,
    help="where to write the HTML report of the comparison ('' for none)",
)
@click.option(
    "--policy",
    "policy_path",
    type=click.Path(dir_okay=False, writable=True),
    default="ctxeval-policy.json",
    show_default=True,
    help="where to write the best held-out runtime policy ('' for none)",
)
def command(html_path: str, policy_path: str) -> None:
    """Run the main job on the bundled example data set, print a readable report, and write the HTML
    report of the comparison and the best runtime policy."""
    from .._demo import demo_report

    click.echo(demo_report(html_path or None, policy_path or None), nl=False)
