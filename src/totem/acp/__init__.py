"""`totem acp`: totem as an Agent Client Protocol agent, for editors (Zed, JetBrains, Neovim).

JSON-RPC over stdio with the `agent-client-protocol` SDK. A client of the session service,
like the terminal chat and the page: the same agent, tools, permissions, trust and store.

    agent.py        the protocol's methods: initialize, sessions, prompt, cancel, mode, model
    session.py      one editor session: its SessionService, its run, its choices
    updates.py      totem's events as ACP session updates (chunks, tool calls, diffs, plan)
    permissions.py  a permission question as session/request_permission, the reply as a rule
    files.py        the editor's file system (unsaved buffers) for the file tools
    terminal.py     the editor's terminal for bash
    prompt.py       an ACP prompt (text, images, resources, links) as totem's request
    history.py      a stored session replayed to the editor (session/load)
    choices.py      the modes and the models offered
    plan.py         a plan-mode answer offered for approval, in the mode chosen
"""
