"""``rsio-tck wireshark install`` and ``rsio-tck wireshark path`` (registered in ``tck/cli.py``)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..binding import BINDING_NAMES
from ..gate import EXIT_CODES_HELP, plain_help_command
from . import PLUGIN_DIR_ENV, WiresharkError, dissector_path, dissectors, install, personal_plugin_dir

wireshark_app = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode=None, epilog=EXIT_CODES_HELP,
                            help="Wireshark dissectors for the kit's bindings: install them, or find them.")


@wireshark_app.command("install", epilog=EXIT_CODES_HELP, cls=plain_help_command())
def install_command(
    plugin_dir: Path | None = typer.Option(
        None, "--plugin-dir", envvar=PLUGIN_DIR_ENV, metavar="DIR",
        help="copy into this folder instead of Wireshark's personal Lua plugin folder"),
) -> None:
    """Copy the dissectors into Wireshark's personal Lua plugin folder (Wireshark loads them at start-up)."""
    try:
        copied = install(plugin_dir or personal_plugin_dir())
    except WiresharkError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for path in copied:
        typer.echo(f"installed {path}")
    typer.echo("restart Wireshark (or Analyze > Reload Lua Plugins) to load them")


@wireshark_app.command("path", epilog=EXIT_CODES_HELP, cls=plain_help_command())
def path_command(
    binding: str | None = typer.Argument(None, metavar="BINDING", help=f"one binding ({', '.join(BINDING_NAMES)}); default: all"),
    plugin_dir: bool = typer.Option(False, "--plugin-dir", help="print Wireshark's personal Lua plugin folder instead"),
) -> None:
    """Print where the shipped dissectors are, one file a line, for `tshark -X lua_script:FILE`."""
    if plugin_dir:
        typer.echo(personal_plugin_dir())
        return
    try:
        paths = [dissector_path(name) for name in ([binding] if binding else list(dissectors()))]
    except WiresharkError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for path in paths:
        typer.echo(path)
