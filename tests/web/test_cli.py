"""`totem serve` on the command line: its parser plugs into `totem`'s sub-commands."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from totem.cli.serve import DEFAULT_PORT, add_parser, serve_command


def test_the_serve_parser_plugs_into_the_sub_commands() -> None:
    parser = argparse.ArgumentParser(prog="totem")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["serve", "--port", "0", "--host", "::1"])
    assert (args.command, args.port, args.host, args.open) == ("serve", 0, "::1", False)
    assert args.handler is serve_command
    defaults = parser.parse_args(["serve"])
    assert defaults.port is None and defaults.host == "127.0.0.1" and DEFAULT_PORT == 8765


def test_a_port_in_use_is_said_plainly(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "totem.cli.serve", "--port", str(port)], cwd=tmp_path,
            capture_output=True, text=True, timeout=30,
            env={"XDG_DATA_HOME": str(tmp_path / "d"), "XDG_CONFIG_HOME": str(tmp_path / "c"),
                 "PATH": "/usr/bin:/bin"},
        )
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
