"""What a sandboxed command never sees: the places that hold secrets, and the variables.

`HIDDEN` is the one list of places (files and folders) hidden from commands: a folder becomes
an empty read-only folder, a file an empty one. The config's `sandbox.hidden` adds to it.
`SECRET_VARIABLES` is the one list of environment variable names (shell patterns, matched
without regard to case) that are not passed in.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from totem.settings.paths import config_dir, data_dir

__all__ = ["HIDDEN", "SECRET_VARIABLES", "filtered_environment", "hidden_places", "is_secret"]

# Under the home folder unless absolute. totem's own places are added by `hidden_places`
# (they follow XDG_CONFIG_HOME and XDG_DATA_HOME).
HIDDEN: tuple[str, ...] = (
    "~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube",
    "~/.docker/config.json", "~/.netrc", "~/.npmrc", "~/.pypirc", "~/.git-credentials",
    "~/.config/gh", "~/.config/hub", "~/.password-store", "~/.local/share/keyrings",
    "~/.terraform.d/credentials.tfrc.json", "~/.vault-token", "~/.cargo/credentials.toml",
    "~/.cargo/credentials", "~/.gem/credentials", "~/.config/op", "~/.m2/settings.xml",
)

SECRET_VARIABLES: tuple[str, ...] = (
    "*_API_KEY", "*_APIKEY", "*_TOKEN", "*_SECRET", "*_SECRET_*", "*_PASSWORD", "*_PASSWD",
    "*_ACCESS_KEY", "*_ACCESS_KEY_ID", "*_PRIVATE_KEY", "*_CREDENTIALS", "*_CLIENT_SECRET",
    "AWS_*", "AZURE_*", "GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_*", "GCLOUD_*",
    "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "VAULT_*", "DOCKER_AUTH_CONFIG", "NPM_CONFIG__AUTH*",
    "PGPASSWORD", "MYSQL_PWD", "LITELLM_MASTER_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
)


def is_secret(name: str) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_VARIABLES)


def filtered_environment(environment: Mapping[str, str]) -> dict[str, str]:
    """The environment without the variables that hold secrets."""
    return {name: value for name, value in environment.items() if not is_secret(name)}


def _place(entry: str, home: Path) -> Path:
    if entry == "~" or entry.startswith("~/"):
        return home / entry[2:]
    return Path(entry)


def hidden_places(extra: Iterable[str] = (), *, root: Path) -> list[Path]:
    """The places to hide that exist, each by its real path, leaving out any that holds the
    project (hiding it would hide the work) and any the project holds (the person's own
    files, which the model reads anyway)."""
    home = Path(os.path.expanduser("~"))
    wanted = [_place(e, home) for e in (*HIDDEN, *extra)]
    wanted += [config_dir() / "keys.json", data_dir()]  # keys, trust, sessions, MCP logins
    found: list[Path] = []
    for place in wanted:
        if not os.path.lexists(place):
            continue
        real = Path(os.path.realpath(place))
        if real == root or real in root.parents or root in real.parents:
            continue
        if real.exists() and real not in found:
            found.append(real)
    return found
