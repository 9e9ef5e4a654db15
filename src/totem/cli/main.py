"""`totem` command line. Imports stay lazy: `totem --version` loads nothing but this."""

from __future__ import annotations

import sys

from totem.cli.exit_codes import EXIT_OK


def _parser() -> object:
    import argparse

    from totem import __version__

    parser = argparse.ArgumentParser(
        prog="totem", description="A coding agent for your terminal, on the model you have."
    )
    parser.add_argument("--version", action="version", version=f"totem {__version__}")
    parser.add_argument("--model", "-m", help="PROVIDER/MODEL to use")
    parser.add_argument("--continue", "-c", dest="continue_last", action="store_true",
                        help="continue the latest session of this project")
    parser.add_argument("--session", "-s", help="resume the session with this id")
    sandbox_help = "the sandbox of bash and process (default: the config's, workspace-write)"
    modes = ["read-only", "workspace-write", "off"]
    parser.add_argument("--sandbox", choices=modes, metavar="MODE", help=sandbox_help)
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run one request headless and exit")
    run.add_argument("message", nargs="+",
                     help="what to do; `-` reads it from stdin (piped input is added to it)")
    run.add_argument("--model", "-m", dest="run_model", help="PROVIDER/MODEL to use")
    run.add_argument("--format", choices=["text", "json"], default="text")
    run.add_argument("--image", "-i", action="append", default=[], metavar="FILE",
                     help="attach an image (again for more; the model must take images)")
    run.add_argument("--max-steps", "--max-turns", dest="max_steps", type=int, default=None,
                     help="model requests at most (then one closing answer; exit 3)")
    run.add_argument("--max-cost", type=float, default=None, metavar="USD",
                     help="stop once the run has cost this much (exit 3)")
    run.add_argument("--max-tokens", type=int, default=None, metavar="N",
                     help="stop once the run has used this many tokens (exit 3)")
    run.add_argument("--yes", "-y", action="store_true",
                     help="allow every action that no rule denies")
    run.add_argument("--sandbox", dest="run_sandbox", choices=modes, metavar="MODE",
                     help=sandbox_help + "; --yes never lifts it")
    run.add_argument("--agent", "-a", help="run as this agent (see `totem agents`)")
    run.add_argument("--plan", action="store_true",
                     help="plan mode: only read, print the plan, change nothing (even with --yes)")
    run.add_argument("--trust", action="store_true",
                     help="trust this folder's own .totem config (remembered; see `totem trust`)")
    group = run.add_mutually_exclusive_group()
    group.add_argument("--continue", "-c", dest="run_continue", action="store_true",
                       help="continue the latest session of this project")
    group.add_argument("--session", "-s", dest="run_session", help="resume this session")
    group.add_argument("--fork", metavar="ID", help="continue a copy of this session")
    from totem.cli.agents import add_parser as add_agents_parser

    add_agents_parser(sub)
    from totem.cli import hooks, models, providers, tools

    providers.add_parsers(sub)
    models.add_parsers(sub)
    tools.add_parsers(sub)
    hooks.add_parsers(sub)
    from totem.cli.history import add_parsers as add_history_parsers

    add_history_parsers(sub)
    from totem.cli.mcp import add_parser as add_mcp_parser

    add_mcp_parser(sub)
    from totem.cli.serve import add_parser as add_serve_parser

    add_serve_parser(sub)
    from totem.cli.trust import add_parser as add_trust_parser

    add_trust_parser(sub)
    sub.add_parser("doctor", help="what works on this computer: the sandbox of commands")
    from totem.cli.batch import add_parser as add_batch_parser

    add_batch_parser(sub)
    from totem.cli.acp import add_parser as add_acp_parser

    add_acp_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    if args_list[:1] in (["--version"], ["-V"]):
        from totem import __version__

        print(f"totem {__version__}")
        return EXIT_OK
    import argparse

    parser = _parser()
    assert isinstance(parser, argparse.ArgumentParser)
    args = parser.parse_args(args_list)
    if args.command in ("providers", "models", "tools", "hooks", "sessions", "export", "undo",
                        "redo"):
        code: int = args.handler(args)
        return code
    if args.command == "run":
        from totem.cli.run import run_command

        return run_command(args)
    if args.command == "serve":
        from totem.cli.serve import serve_command

        return serve_command(args)
    if args.command == "mcp":
        from totem.cli.mcp import mcp_command

        return mcp_command(args)
    if args.command == "trust":
        from totem.cli.trust import trust_command

        return trust_command(args)
    if args.command == "doctor":
        from totem.cli.doctor import doctor_command

        return doctor_command(args)
    if args.command == "batch":
        from totem.cli.batch import batch_command

        return batch_command(args)
    if args.command == "acp":
        from totem.cli.acp import acp_command

        return acp_command(args)
    if args.command == "agents":
        from totem.cli.agents import agents_command

        return agents_command(args)
    from totem.cli.chat import chat_command

    return chat_command(args)


if __name__ == "__main__":
    raise SystemExit(main())
