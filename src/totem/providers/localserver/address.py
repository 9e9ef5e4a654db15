"""Whether a base URL points at this computer or the local network, and what to say when
nothing answers there.

A model server on 127.0.0.1 or on the local network that refuses the connection is not a
network blip: it is not started, or the URL is wrong. Retrying it for minutes helps no one,
so such a failure is a `LocalServerDown` (base.py), retried only briefly (retry.py).
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["is_local_url", "nothing_answers"]

_LOCAL_NAMES = ("localhost",)
_LOCAL_SUFFIXES = (".localhost", ".local")
# private networks (RFC 1918, IPv6 unique local); `is_private` would add documentation ranges
_PRIVATE_NETWORKS = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")


def is_local_url(url: str) -> bool:
    """True for a URL whose host is loopback (127.0.0.0/8, ::1, localhost), private (10/8,
    172.16/12, 192.168/16, fc00::/7), link-local, or an mDNS name (*.local)."""
    import ipaddress  # only when a connection failed

    try:
        host = (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return False
    if host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_link_local or any(
        address in ipaddress.ip_network(network) for network in _PRIVATE_NETWORKS
    )


def nothing_answers(url: str) -> str:
    """The message for a local server that refuses the connection: the URL and what to do."""
    return (
        f"nothing answers at {url} — start your model server (llama-server, ollama serve, "
        "LM Studio) or fix base_url"
    )
