"""Language servers' diagnostics after an edit: the new errors go back in the tool's result.

    settings/lsp.py   which server checks which files (config `lsp:`; python, typescript built in)
    launch.py         the one place a server's command line is made (a sandbox wraps it)
    connection.py     one server over stdio: start, send a file, await its diagnostics, stop
    problems.py       diagnostics as totem reads them: new errors, worst first, a few lines
    servers.py        a session's servers: started on first use, restarted once, then skipped

The client side of the protocol is pygls (`pygls.lsp.client.LanguageClient`, with the
lsprotocol types): a well-kept library (it is the base of many Python language servers and
of their tests) that does the JSON-RPC framing, request ids and type conversion, so nothing
here speaks the wire. `multilspy` was considered and not taken: it downloads its own servers
at run time (no network here but the registries), covers navigation rather than diagnostics,
and starts a thread and event loop of its own per server. Importing pygls takes 0.4-0.5 s on
this machine; it happens on the first change of a file that a server checks, never at start.
"""

from __future__ import annotations

__all__: list[str] = []
