"""tts: speak a text to a WAV file in the project with a local engine, and play it if asked.

espeak-ng (the Debian package) by default; Piper when `integrations.tts.engine: piper` names
a voice model. Absent until `integrations.tts` is set and the engine is installed. The call
asks first (`tts` permission, pattern the file's path): it writes a file, and may use the
speakers. The text goes to the engine on its standard input, never as an argument.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import time
import wave
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from totem.settings.integrations import TtsSettings
from totem.tools.base import ToolContext, ToolError, ToolResult

__all__ = ["Speak", "SpeakInput"]

MAX_TEXT = 5_000
TIMEOUT = 120.0
PLAYERS = (("paplay",), ("aplay", "-q"), ("play", "-q"), ("afplay",))


class SpeakInput(BaseModel):
    text: str = Field(description="What to say.")
    path: str | None = Field(None, description="Where to save the WAV (default speech/NAME.wav).")
    play: bool | None = Field(None, description="Also play it on the speakers.")


class Speak:
    name: ClassVar[str] = "tts"
    kind: ClassVar[str] = "integration"
    description: ClassVar[str] = ("Speak a text to a WAV file in the project (and optionally "
                                  "play it); returns the file's path and its duration.")
    read_only: ClassVar[bool] = False
    Input: ClassVar[type[BaseModel]] = SpeakInput

    def __init__(self, settings: TtsSettings) -> None:
        self.settings = settings

    async def run(self, args: SpeakInput, ctx: ToolContext) -> ToolResult:
        text = args.text.strip()
        if not text:
            raise ToolError("The text is empty.")
        if len(text) > MAX_TEXT:
            raise ToolError(f"The text has {len(text)} characters; at most {MAX_TEXT} are "
                            "spoken at once. Split it.")
        wanted = args.path or f"speech/{_slug(text)}-{time.strftime('%Y%m%d-%H%M%S')}.wav"
        if not wanted.lower().endswith(".wav"):
            raise ToolError(f"The speech is saved as WAV: give a path ending in .wav, "
                            f"not {wanted!r}.")
        path = await ctx.resolve(wanted)
        relative = ctx.relative(path)
        play = self.settings.play if args.play is None else args.play
        await ctx.ask("tts", [relative], title=f"speak {len(text)} characters with "
                      f"{self.settings.engine} into {relative}{' and play it' if play else ''}")
        ctx.snapshot(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        await _run(self._command(path), text, ctx)
        seconds = _duration(path)
        played = await _play(path, ctx) if play else ""
        return ToolResult(f"Saved {relative} ({seconds:.2f} s of speech).{played}",
                          title=relative)

    def _command(self, path: Path) -> list[str]:
        if self.settings.engine == "piper":
            assert self.settings.model is not None
            return ["piper", "--model", str(Path(self.settings.model).expanduser()),
                    "--output_file", str(path)]
        voice = ["-v", self.settings.voice] if self.settings.voice else []
        return ["espeak-ng", *voice, "-w", str(path), "--stdin"]


async def _run(command: list[str], text: str, ctx: ToolContext) -> None:
    if shutil.which(command[0]) is None:
        raise ToolError(f"{command[0]} is not installed (not on PATH).")
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE)
    talk = asyncio.ensure_future(process.communicate(text.encode("utf-8")))
    stop = asyncio.ensure_future(ctx.abort.wait())
    try:
        done, _ = await asyncio.wait({talk, stop}, timeout=TIMEOUT,
                                     return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
    if talk not in done:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        talk.cancel()
        ctx.abort.check()
        raise ToolError(f"{command[0]} took more than {TIMEOUT:.0f} s.")
    _, errors = talk.result()
    if process.returncode != 0:
        said = errors.decode("utf-8", "replace").strip()[-500:]
        raise ToolError(f"{command[0]} failed (exit {process.returncode}): {said}")


def _duration(path: Path) -> float:
    try:
        with wave.open(str(path), "rb") as sound:
            return sound.getnframes() / float(sound.getframerate())
    except (OSError, EOFError, wave.Error) as exc:
        raise ToolError(f"The engine wrote no readable WAV file ({exc}).") from None


async def _play(path: Path, ctx: ToolContext) -> str:
    for player in PLAYERS:
        if shutil.which(player[0]):
            process = await asyncio.create_subprocess_exec(
                *player, str(path), stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL)
            code = await process.wait()
            return " Played it." if code == 0 else f" Playing it failed ({player[0]} exit {code})."
    return " No audio player was found (paplay, aplay, play), so it was not played."


def _slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())[:6]
    return "-".join(words)[:48] or "speech"
