"""One try of Aider's benchmark harness, run by the Python of Aider's own venv.

This is the part of `run_test_real` in Aider's benchmark/benchmark.py that talks to the model,
with the same objects and arguments: `InputOutput(pretty=False, yes=True, chat_history_file=…)`,
`models.Model(NAME, weak_model=None)`, `Coder.create(model, EDIT_FORMAT, io, fnames=[stubs],
use_git=False, stream=False, cache_prompts=True, suggest_shell_commands=False,
ignore_mentions=…)`, `coder.get_file_mentions = lambda x: set()`, then
`coder.run(with_message=MESSAGE, preproc=False)`. The harness keeps one Coder for both tries;
here each try is a process of its own (so that a try can be killed at its limit, as totem's
are), and the chat is carried over exactly: the Coder's messages are saved after a try (once
its history summary, if one started, is done) and given to the next try's Coder as
`done_messages`. A try killed at the limit saves nothing: the next one starts a new chat.
After the last try (`--final`) the process ends without waiting for the history summary that
Aider starts in the background when the chat has grown past its limit: the harness does not
wait for it either, and no try would read it.

    python aider_driver.py --model openai/local --file acronym.py --message-file m.txt \
        --messages state.json --chat-history h.md --result r.json --ignore acronym_test.py
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--edit-format", default="whole")
    parser.add_argument("--file", action="append", required=True, dest="files", type=Path)
    parser.add_argument("--ignore", action="append", default=[])
    parser.add_argument("--message-file", required=True, type=Path)
    parser.add_argument("--messages", required=True, type=Path,
                        help="the chat so far: read when present, written after the try")
    parser.add_argument("--chat-history", required=True, type=Path)
    parser.add_argument("--result", required=True, type=Path)
    parser.add_argument("--final", action="store_true", help="no try comes after this one")
    return parser.parse_args()


def main() -> int:
    args = _arguments()
    from aider import models
    from aider.coders import Coder
    from aider.io import InputOutput

    io = InputOutput(pretty=False, yes=True, chat_history_file=str(args.chat_history))
    main_model = models.Model(args.model, weak_model=None, editor_model=None,
                              editor_edit_format=None, verbose=False)
    done = json.loads(args.messages.read_text()) if args.messages.is_file() else []
    coder = Coder.create(
        main_model, args.edit_format, io,
        fnames=[str(path.resolve()) for path in args.files],
        use_git=False, stream=False, verbose=False, cache_prompts=True,
        suggest_shell_commands=False, ignore_mentions=set(args.ignore),
        done_messages=done or None,
    )
    coder.show_announcements()
    coder.get_file_mentions = lambda x: set()  # as the harness: no other files are added

    response = coder.run(with_message=args.message_file.read_text(), preproc=False) or ""
    if not args.final:
        coder.summarize_end()  # the harness's next run would wait for it the same way
        args.messages.write_text(json.dumps(coder.done_messages + coder.cur_messages, indent=1))
    args.result.write_text(json.dumps({
        "edit_format": coder.edit_format,
        "tokens_sent": coder.total_tokens_sent,
        "tokens_received": coder.total_tokens_received,
        "malformed_responses": coder.num_malformed_responses,
        "exhausted_context_windows": coder.num_exhausted_context_windows,
        "lazy_comments": len(re.findall(r"^[+]? *[#].* [.][.][.] ", response, re.MULTILINE)),
    }))
    if args.final:  # a summary thread may still be running: leave it
        sys.stdout.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
