"""Entry point for spark-submit: ``spark-submit tck/pipeline/__main__.py publish reports/ --out site/``.

Also ``python -m rsio_tck.pipeline ...``.  It runs the ``pipeline`` and ``publish``
commands; under spark-submit the session (master, executors, memory) is the
one spark-submit configured.
"""

from __future__ import annotations

import sys

import typer

from rsio_tck.pipeline.cli import pipeline_command, publish_command

app = typer.Typer(add_completion=False, no_args_is_help=True, help="rsio-tck pipeline (Spark)")
app.command("pipeline")(pipeline_command)
app.command("publish")(publish_command)

if __name__ == "__main__":
    sys.exit(app())
