"""`python chromium_allow.py URL`: a BROWSER for `totem mcp login` in the tests.

Python's webbrowser module runs $BROWSER with the address; this opens it in headless
Chromium, presses "Allow" on the test server's sign-in page and waits for totem's loopback
answer, which it prints.
"""

from __future__ import annotations

import sys

from playwright.sync_api import sync_playwright

from tests.support.web_serve import CHROMIUM, CHROMIUM_ARGS


def main(url: str) -> int:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(url)
            page.click("#allow")
            page.wait_for_url("http://127.0.0.1:*/callback*")
            print(page.inner_text("body"))
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
