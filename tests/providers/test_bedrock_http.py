"""BedrockProvider against a local server answering from a script: the one-time credential
reset on a 403, SigV4 signing (checked by recomputing the signature with botocore), exception
events inside the stream, broken streams, and the model list.

The server answers from a script, one entry per request; an entry may be a function of the
request (so that it can, say, rotate the token in the environment the way a user would).
Environment variables are set with monkeypatch; no code of ours is patched.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

import pytest

from tests.support.local_http import Recorded, Reply, serving
from tests.support.streams import ask, stream_events
from totem.providers.base import (
    AuthError,
    RateLimited,
    RetryableError,
    StreamEnd,
    StreamEvent,
    TextChunk,
)
from totem.providers.bedrock import BedrockProvider
from totem.providers.transport.eventstream import encode_event, encode_exception, encode_message

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
REGION = "eu-west-3"


Entry: TypeAlias = Reply | Callable[[Recorded], Reply]


@dataclass(slots=True)
class Server:
    url: str
    script: list[Entry]
    seen: list[Recorded] = field(default_factory=list)


@pytest.fixture(name="server")
def server_fixture() -> Iterator[Server]:
    state = Server(url="", script=[])

    def respond(seen: Recorded) -> Reply:
        entry = state.script.pop(0) if state.script else Reply(500, b'{"message":"no script"}')
        return entry(seen) if callable(entry) else entry

    with serving(respond) as server:
        state.url, state.seen = server.url, server.requests
        yield state


STREAM = {"Content-Type": "application/vnd.amazon.eventstream"}


def answer(text: str = "Hi there.", *, end: bool = True) -> bytes:
    frames = [encode_event("messageStart", {"role": "assistant"}),
              encode_event("contentBlockDelta", {"contentBlockIndex": 0,
                                                 "delta": {"text": text}})]
    if end:
        frames += [encode_event("contentBlockStop", {"contentBlockIndex": 0}),
                   encode_event("messageStop", {"stopReason": "end_turn"}),
                   encode_event("metadata", {"usage": {"inputTokens": 3, "outputTokens": 2}})]
    return b"".join(frames)


def forbidden(message: str = "The security token included in the request is expired") -> Reply:
    return Reply(403, json.dumps({"message": message}).encode(), {
        "Content-Type": "application/json",
        "x-amzn-ErrorType": "ExpiredTokenException:http://internal.amazon.com/"})


def collect(provider: BedrockProvider, *, tries: int = 1) -> list[StreamEvent]:
    return stream_events(lambda: provider, ask("hello", model=MODEL), tries=tries)[0]


def bearer(server: Server, token: str | None = "tok-SECRET-1") -> BedrockProvider:
    return BedrockProvider("aws", server.url, api_key=token, region=REGION)


@pytest.fixture(name="no_aws")
def no_aws_fixture(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """An environment with no AWS settings at all: no token, no keys, no files, no IMDS."""
    for name in ("AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                 "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION",
                 "AWS_DEFAULT_REGION", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                 "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return monkeypatch


# -- 403: credentials resolved again, once ------------------------------------------------------


def test_a_403_resets_credentials_once_and_retries_once(server: Server) -> None:
    server.script = [forbidden(), Reply(200, answer(), STREAM)]
    provider = bearer(server)
    events = collect(provider)
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Hi there."
    assert events[-1] == StreamEnd("stop", "end_turn")
    assert len(server.seen) == 2 and provider.credential_resets == 1


def test_a_second_403_is_an_auth_error_without_the_token(server: Server) -> None:
    server.script = [forbidden(), forbidden("echo tok-SECRET-1 denied")]
    provider = bearer(server)
    with pytest.raises(AuthError) as raised:
        collect(provider, tries=10)
    assert len(server.seen) == 2 and provider.credential_resets == 1
    assert raised.value.status == 403 and "ExpiredTokenException" in raised.value.message
    assert "tok-SECRET-1" not in str(raised.value) and "echo *** denied" in str(raised.value)


def test_a_401_is_not_retried(server: Server) -> None:
    server.script = [Reply(401, b'{"message": "no"}')]
    provider = bearer(server)
    with pytest.raises(AuthError, match="HTTP 401: no"):
        collect(provider, tries=10)
    assert len(server.seen) == 1 and provider.credential_resets == 0


def test_the_reset_reads_a_rotated_token_from_the_environment(
    server: Server, no_aws: pytest.MonkeyPatch
) -> None:
    no_aws.setenv("AWS_BEARER_TOKEN_BEDROCK", "old-token")

    def rotate(_: Recorded) -> Reply:
        no_aws.setenv("AWS_BEARER_TOKEN_BEDROCK", "new-token")  # the user renews it meanwhile
        return forbidden()

    server.script = [rotate, Reply(200, answer(), STREAM)]
    collect(bearer(server, token=None))
    assert [s.headers["authorization"] for s in server.seen] == [
        "Bearer old-token", "Bearer new-token"]


# -- SigV4 ----------------------------------------------------------------------------------


def verify_sigv4(seen: Recorded, key: str, secret: str, token: str | None = None) -> None:
    """Recompute the signature of what the server received, with botocore."""
    from botocore.auth import SigV4Auth  # type: ignore[import-untyped,unused-ignore]
    from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped,unused-ignore]
    from botocore.credentials import Credentials  # type: ignore[import-untyped,unused-ignore]

    authorization = seen.headers["authorization"]
    match = re.fullmatch(r"AWS4-HMAC-SHA256 Credential=([^,]+), SignedHeaders=([^,]+), "
                         r"Signature=([0-9a-f]{64})", authorization)
    assert match, authorization
    credential, signed, signature = match.groups()
    date = seen.headers["x-amz-date"]
    assert credential == f"{key}/{date[:8]}/{REGION}/bedrock/aws4_request"
    headers = {name: seen.headers[name] for name in signed.split(";")}
    request = AWSRequest(method=seen.method, url=f"http://{seen.headers['host']}{seen.target}",
                         data=seen.body, headers=headers)
    request.context["timestamp"] = date
    signer = SigV4Auth(Credentials(key, secret, token), "bedrock", REGION)
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)),
                                request)
    assert signature == expected


def test_sigv4_from_static_credentials_in_the_environment(
    server: Server, no_aws: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("botocore")
    no_aws.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    no_aws.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    server.script = [Reply(200, answer(), STREAM)]
    events = collect(BedrockProvider("aws", server.url, region=REGION))
    assert events[-1] == StreamEnd("stop", "end_turn")
    [seen] = server.seen
    assert seen.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert seen.target == f"/model/{MODEL.replace(':', '%3A')}/converse-stream"
    assert "x-amz-security-token" not in seen.headers
    assert "SignedHeaders=content-type;host;x-amz-date," in seen.headers["authorization"]
    verify_sigv4(seen, "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    assert json.loads(seen.body)["system"][0] == {"text": "You are totem."}


def test_sigv4_session_credentials_are_resolved_again_after_a_403(
    server: Server, no_aws: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("botocore")
    no_aws.setenv("AWS_ACCESS_KEY_ID", "ASIAOLD")
    no_aws.setenv("AWS_SECRET_ACCESS_KEY", "old-secret")
    no_aws.setenv("AWS_SESSION_TOKEN", "old-session")

    def renew(_: Recorded) -> Reply:
        no_aws.setenv("AWS_ACCESS_KEY_ID", "ASIANEW")
        no_aws.setenv("AWS_SECRET_ACCESS_KEY", "new-secret")
        no_aws.setenv("AWS_SESSION_TOKEN", "new-session")
        return forbidden()

    server.script = [renew, Reply(200, answer(), STREAM)]
    provider = BedrockProvider("aws", server.url, region=REGION)
    collect(provider)
    old, new = server.seen
    assert old.headers["x-amz-security-token"] == "old-session"
    assert new.headers["x-amz-security-token"] == "new-session"
    verify_sigv4(new, "ASIANEW", "new-secret", "new-session")
    assert provider.credential_resets == 1


def test_no_credentials_at_all_is_a_clear_auth_error(
    server: Server, no_aws: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("botocore")
    with pytest.raises(AuthError, match="no bearer token .* and no AWS credentials found"):
        collect(BedrockProvider("aws", server.url, region=REGION))
    assert server.seen == []


# -- exceptions and broken streams -------------------------------------------------------------


def test_an_exception_event_after_output_is_raised_classified(server: Server) -> None:
    body = answer("partial", end=False) + encode_exception("throttlingException", "slow down")
    server.script = [Reply(200, body, STREAM)]
    events: list[StreamEvent] = []
    with pytest.raises(RateLimited, match="Bedrock throttlingException: slow down"):
        events += collect(bearer(server), tries=10)
    assert len(server.seen) == 1  # text was shown: not retried


def test_an_exception_event_before_output_is_retried(server: Server) -> None:
    server.script = [
        Reply(200, encode_exception("modelStreamErrorException", "model hiccup"), STREAM),
        Reply(200, answer("recovered"), STREAM),
    ]
    events = collect(bearer(server), tries=3)
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "recovered"
    assert len(server.seen) == 2


def test_an_error_message_and_a_validation_exception(server: Server) -> None:
    error = encode_message({":message-type": "error", ":error-code": "InternalFailure",
                            ":error-message": "oops"}, b"")
    server.script = [Reply(200, error, STREAM)]
    with pytest.raises(Exception, match="Bedrock internalFailure: oops"):
        collect(bearer(server))
    server.script = [Reply(200, encode_exception("validationException", "bad input"), STREAM)]
    with pytest.raises(Exception, match="validationException: bad input") as raised:
        collect(bearer(server), tries=5)
    assert type(raised.value).__name__ == "InvalidRequest" and len(server.seen) == 2


def test_garbage_and_cut_frames_are_retryable(server: Server) -> None:
    server.script = [Reply(200, b"<html>proxy error</html>", {"Content-Type": "text/html"})]
    with pytest.raises(RetryableError, match="malformed event stream: prelude CRC"):
        collect(bearer(server))
    server.script = [Reply(200, answer()[:-5], STREAM)]
    with pytest.raises(RetryableError, match="malformed event stream.*ended inside a message"):
        collect(bearer(server))


# -- the model list -----------------------------------------------------------------------------


def test_list_models_from_the_control_plane(server: Server, no_aws: pytest.MonkeyPatch) -> None:
    pytest.importorskip("botocore")
    no_aws.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    no_aws.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    listing = {"modelSummaries": [{"modelId": "anthropic.claude-3-5-haiku-20241022-v1:0"},
                                  {"modelId": "amazon.nova-pro-v1:0"}]}
    server.script = [Reply(200, json.dumps(listing).encode(),
                           {"Content-Type": "application/json"})]

    async def main() -> list[str]:
        provider = BedrockProvider("aws", region=REGION,
                                   options={"control_url": server.url})
        try:
            return await provider.list_models()
        finally:
            await provider.aclose()

    assert asyncio.run(main()) == ["anthropic.claude-3-5-haiku-20241022-v1:0",
                                   "amazon.nova-pro-v1:0"]
    [seen] = server.seen
    assert (seen.method, seen.target) == ("GET", "/foundation-models")
    verify_sigv4(seen, "AKIDEXAMPLE", "secret")


def test_default_urls_region_and_repr(no_aws: pytest.MonkeyPatch) -> None:
    assert BedrockProvider("a").base_url == "https://bedrock-runtime.us-east-1.amazonaws.com"
    no_aws.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    assert BedrockProvider("a").region == "ap-south-1"
    no_aws.setenv("AWS_REGION", "eu-central-1")
    provider = BedrockProvider("a", api_key="secret-token", options={"region": "us-west-2"})
    assert provider.base_url == "https://bedrock-runtime.us-west-2.amazonaws.com"
    assert "secret-token" not in repr(provider) and "auth=bearer" in repr(provider)
    assert BedrockProvider("a", region="sa-east-1").region == "sa-east-1"


def test_boto3_reads_the_streams_this_file_serves(
    server: Server, no_aws: pytest.MonkeyPatch
) -> None:
    """The frames our test server sends are what boto3 expects from Bedrock."""
    boto3 = pytest.importorskip("boto3")
    no_aws.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    no_aws.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    server.script = [Reply(200, answer("Hi from the fake."), STREAM)]
    client = boto3.client("bedrock-runtime", region_name=REGION, endpoint_url=server.url)
    response = client.converse_stream(modelId=MODEL, messages=[
        {"role": "user", "content": [{"text": "hello"}]}])
    events = list(response["stream"])
    assert [next(iter(e)) for e in events] == [
        "messageStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"]
    assert events[1]["contentBlockDelta"]["delta"] == {"text": "Hi from the fake."}
    assert events[4]["metadata"]["usage"] == {"inputTokens": 3, "outputTokens": 2}
    [seen] = server.seen
    assert seen.target == f"/model/{MODEL.replace(':', '%3A')}/converse-stream"
    server.script = [Reply(200, encode_exception("throttlingException", "slow"), STREAM)]
    with pytest.raises(Exception, match=r"\(throttlingException\) .*: slow"):
        list(client.converse_stream(modelId=MODEL, messages=[
            {"role": "user", "content": [{"text": "hello"}]}])["stream"])
