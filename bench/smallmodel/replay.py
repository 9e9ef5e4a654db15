"""One step of a real run, asked again and again: does a change of its sampling (or of its
last message) change what the model writes? Seconds a sample, where a whole run is minutes
and its outcome hangs on every step before.

Record a run's requests with a forwarding server between totem and llama-server, then ask
the last one (or any) N times with each variant, each time after the requests before it, in
order: llama-server's prompt cache makes an answer depend on the path to it (the README's
question, asked alone ten times, listed the files 18 of 18; asked after the run's two
earlier requests, 2 of 3).

    python bench/smallmodel/replay.py record --listen 8090 --upstream 8080 --out run.jsonl &
    TOTEM_BASE_URL=http://127.0.0.1:8090/v1 TOTEM_MODEL=... totem run "..."
    python bench/smallmodel/replay.py again run.jsonl --upstream 8080 -n 6 \\
        --variant 'now={}' --variant 'no-dry={"dry_multiplier": 0}' --has pyproject.toml

`--has` words that a good answer contains (all of them); the figures are how many of the
N answers have them, per variant, asked in turn (variant by variant within each round).
"""

from __future__ import annotations

import argparse
import http.server
import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

HOP_HEADERS = {"host", "content-length", "transfer-encoding", "connection"}


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    record = sub.add_parser("record", help="forward to llama-server, keeping each request")
    record.add_argument("--listen", type=int, required=True)
    record.add_argument("--upstream", type=int, default=8080)
    record.add_argument("--out", type=Path, required=True)
    again = sub.add_parser("again", help="ask a recorded request again, N times a variant")
    again.add_argument("bodies", type=Path)
    again.add_argument("--upstream", type=int, default=8080)
    again.add_argument("-n", type=int, default=5)
    again.add_argument("--index", type=int, default=-1, help="which request (default: last)")
    again.add_argument("--variant", action="append", default=[],
                       help="NAME=JSON: fields set on the request (default: now={})")
    again.add_argument("--has", action="append", default=[])
    return parser.parse_args()


def record(listen: int, upstream: int, out: Path) -> None:
    base = f"http://127.0.0.1:{upstream}"
    log = out.open("a", encoding="utf-8")

    class Forward(http.server.BaseHTTPRequestHandler):
        def _forward(self, body: bytes | None) -> None:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
            request = urllib.request.Request(base + self.path, data=body, method=self.command,
                                             headers=headers)
            with urllib.request.urlopen(request, timeout=900) as reply:
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    if key.lower() not in HOP_HEADERS:
                        self.send_header(key, value)
                self.send_header("Connection", "close")
                self.end_headers()
                while chunk := reply.read1(65536):
                    self.wfile.write(chunk)
                    self.wfile.flush()

        def do_GET(self) -> None:  # noqa: N802 (the server's name for it)
            self._forward(None)

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            if self.path.endswith("/chat/completions"):
                log.write(body.decode("utf-8") + "\n")
                log.flush()
            self._forward(body)

        def log_message(self, *args: Any) -> None:
            return None

    http.server.ThreadingHTTPServer(("127.0.0.1", listen), Forward).serve_forever()


def ask(upstream: int, body: dict[str, Any]) -> str:
    """The answer's text, streamed as the run streams it."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{upstream}/v1/chat/completions", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"})
    text = []
    with urllib.request.urlopen(request, timeout=900) as reply:
        for raw in reply:
            line = raw.decode("utf-8").strip()
            if line.startswith("data: ") and line != "data: [DONE]":
                for choice in json.loads(line[6:]).get("choices", []):
                    text.append((choice.get("delta") or {}).get("content") or "")
    return "".join(text)


def again(args: argparse.Namespace) -> None:
    bodies = [json.loads(line) for line in args.bodies.read_text().splitlines() if line]
    index = args.index if args.index >= 0 else len(bodies) + args.index
    variants = dict(v.split("=", 1) for v in args.variant) or {"now": "{}"}
    changes = {name: json.loads(value) for name, value in variants.items()}
    good = dict.fromkeys(changes, 0)
    for round_ in range(args.n):
        for name, change in changes.items():
            for before in bodies[:index]:  # the path to it, for the server's cache
                ask(args.upstream, before)
            text = ask(args.upstream, {**bodies[index], **change})
            ok = all(word in text for word in args.has)
            good[name] += ok
            print(json.dumps({"round": round_, "variant": name, "good": ok,
                              "chars": len(text), "text": text[:200]}), flush=True)
    for name, count in good.items():
        print(f"{name}: {count}/{args.n}")


def main() -> int:
    args = _arguments()
    if args.command == "record":
        record(args.listen, args.upstream, args.out)
    else:
        again(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
