"""What the tests share, each thing in one module. Test modules import from here, never from
one another or from a conftest.py (tests/test_layout_tests.py checks it); a conftest.py holds
pytest fixtures only.

    aimock              the aimock simulator (npm), its fixtures and journal
    chat_pty            the chat on a pseudo-terminal in such a project: type, wait for text
    headless            a project and `totem` commands run in it as processes, on the fake server
    anthropic_captures  the recorded Anthropic streams of the `anthropic` sdist
    cpu_model           llama-server with the cached CPU model
    gemini_streams      the Gemini model, fixtures and wire shapes of the Gemini tests
    integration_servers stand-ins for Slack, the search APIs and an images endpoint
    knowledge_runs      sessions of the real service with the stand-in documentation server
    local_http          real HTTP servers on 127.0.0.1 (one `Reply`), a recording transport
    loop_agents         an Agent on a real store and permission service, and a run of it
    mcp_servers         the real MCP servers and a person who answers their questions
    ports               a free port, and waiting until a server answers
    processes           a server process for the length of a `with`; what /proc shows
    project_files       files a test writes into a project
    raw_http            raw bytes on a socket to a server, as an attacker sends them
    refbin              the reference apply_patch binary (npm)
    required            skip when something is missing, unless the suite requires it
    streams             a provider's stream through the retry policy, and its text and calls
    tool_calls          a tool run as the loop runs it, on a real ToolContext
    trust_victims       a user with a key and a malicious project, for the trust tests
    web_page            waiting on and typing into the page in Chromium
    web_serve           `totem serve` as a process, and a headless Chromium
"""
