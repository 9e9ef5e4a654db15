"""The tts tool with the real espeak-ng; the WAV it writes is measured by sox's soxi."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.required import unavailable
from tests.support.tool_calls import Call, MakeContext, answering
from totem.policy.permission import PermissionDenied
from totem.settings.integrations import TtsSettings
from totem.tools.base import ToolContext, ToolError
from totem.tools.tts import Speak

SENTENCE = "The build is green and every test passes. Time to ship the release."


@pytest.fixture(autouse=True)
def engines() -> None:
    for program in ("espeak-ng", "soxi"):
        if shutil.which(program) is None:
            unavailable(f"{program} is not installed (scripts/audio-test-deps.sh)",
                        required_by="TOTEM_REQUIRE_AUDIO")


def soxi_seconds(path: object) -> float:
    done = subprocess.run(["soxi", "-D", str(path)], capture_output=True, text=True,
                          timeout=30, check=True)
    return float(done.stdout)


def test_speaks_a_sentence_into_a_wav(ctx: ToolContext, call: Call) -> None:
    result = call(Speak(TtsSettings()), ctx, text=SENTENCE, path="out/ship.wav")
    wav = ctx.root / "out/ship.wav"
    seconds = soxi_seconds(wav)
    assert 2.5 < seconds < 12.0  # thirteen words at espeak-ng's 175 words a minute
    assert result.output == f"Saved out/ship.wav ({seconds:.2f} s of speech)."
    short = call(Speak(TtsSettings(voice="en-us")), ctx, text="Hi.", path="hi.wav")
    assert soxi_seconds(ctx.root / "hi.wav") < seconds / 3
    assert short.output.startswith("Saved hi.wav (")


def test_a_default_name_and_bad_paths(ctx: ToolContext, call: Call) -> None:
    result = call(Speak(TtsSettings()), ctx, text="Hello there")
    path = result.output.split()[1]
    assert path.startswith("speech/hello-there-") and path.endswith(".wav")
    assert soxi_seconds(ctx.root / path) > 0.3
    with pytest.raises(ToolError, match="ending in .wav"):
        call(Speak(TtsSettings()), ctx, text="x", path="a.mp3")
    with pytest.raises(ToolError, match="at most 5000"):
        call(Speak(TtsSettings()), ctx, text="word " * 1200)
    if shutil.which("piper") is None:
        with pytest.raises(ToolError, match="piper is not installed"):
            call(Speak(TtsSettings(engine="piper", model="v.onnx")), ctx, text="x")


def test_text_that_looks_like_options_is_only_spoken(ctx: ToolContext, call: Call) -> None:
    call(Speak(TtsSettings()), ctx, text="-w /tmp/elsewhere.wav --help", path="o.wav")
    assert soxi_seconds(ctx.root / "o.wav") > 0.5


def test_it_asks_first(make_ctx: MakeContext, call: Call) -> None:
    with pytest.raises(PermissionDenied):
        call(Speak(TtsSettings()), make_ctx(mode="headless"), text="x", path="a.wav")
    person = make_ctx(mode="interactive")
    asked = answering(person, "reject")
    with pytest.raises(PermissionDenied):
        call(Speak(TtsSettings(play=True)), person, text="Hello", path="a.wav")
    assert asked[0].permission == "tts" and asked[0].patterns == ["a.wav"]
    assert asked[0].title == "speak 5 characters with espeak-ng into a.wav and play it"
    assert not (person.root / "a.wav").exists()


def test_piper_when_configured(ctx: ToolContext, call: Call, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Piper's command line (a stand-in `piper` that speaks through espeak-ng): the voice
    model named, the WAV written where asked, the text read from standard input."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    seen = tmp_path / "piper-args.txt"
    piper = bin_dir / "piper"
    piper.write_text(f"""#!/bin/sh
echo "$@" > {seen}
[ "$1" = --model ] && [ -f "$2" ] && [ "$3" = --output_file ] || exit 2
exec espeak-ng -w "$4" --stdin
""")
    piper.chmod(0o755)
    model = tmp_path / "en_US-lessac-medium.onnx"
    model.write_bytes(b"onnx")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    result = call(Speak(TtsSettings(engine="piper", model=str(model))), ctx,
                  text="Piper speaks here.", path="piper.wav")
    assert seen.read_text().split() == ["--model", str(model), "--output_file",
                                        str(ctx.root / "piper.wav")]
    seconds = soxi_seconds(ctx.root / "piper.wav")
    assert result.output == f"Saved piper.wav ({seconds:.2f} s of speech)." and seconds > 0.5
