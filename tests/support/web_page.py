"""Waiting on and typing into the page in Chromium (the page tests' helpers)."""

from __future__ import annotations

import time
from typing import Any

__all__ = ["TIMEOUT", "answer_text", "send", "shows", "wait_answer", "wait_js"]

TIMEOUT = 20_000  # ms, for each wait on the page


def wait_js(page: Any, expression: str, timeout: float = TIMEOUT / 1000) -> Any:
    """Poll `expression` in the page until it is true (wait_for_function compiles its
    predicate with eval, which the page's Content-Security-Policy forbids)."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"the page never made this true: {expression}")
        time.sleep(0.03)


def wait_answer(page: Any, test: str) -> None:
    """Wait until some answer text of the conversation passes `test` (a JS function)."""
    wait_js(page, f"[...document.querySelectorAll('#conversation .md')]"
                  f".some(m => ({test})(m.textContent))")


def shows(page: Any, text: str) -> None:
    wait_js(page, f"document.querySelector('#conversation').textContent.includes({text!r})")


def send(page: Any, text: str) -> None:
    page.fill("#prompt", text)
    page.press("#prompt", "Enter")


def answer_text(page: Any, nth: int = -1) -> str:
    texts: list[str] = page.eval_on_selector_all(
        "#conversation > .turn", "ts => ts.map(t => [...t.querySelectorAll(':scope > .turn-body "
        "> .md')].map(m => m.textContent).join(''))")
    return texts[nth] if texts else ""
