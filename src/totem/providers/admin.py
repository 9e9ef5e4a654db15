"""Adding and removing providers in the user configuration: the one implementation behind
`totem providers add/remove` and the page's settings.

A provider comes from a template (`providers.catalog.templates`). Its key never enters the
configuration: the configuration says where it comes from (`${env:VAR}`, or `${key:NAME}`
for a key typed in, which goes to the key store, mode 0600). Errors are `ValueError`s
written for a person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from totem.providers.catalog.templates import Template

__all__ = ["Added", "Removed", "add_provider", "defined_elsewhere", "remove_provider"]

_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class Added:
    name: str
    label: str  # the template's name
    base_url: str  # "" for the provider's default endpoint
    key_note: str  # where the key comes from, for a person (never the key)
    path: Path  # the user configuration file written


@dataclass(frozen=True, slots=True)
class Removed:
    name: str
    key_forgotten: bool  # its stored key was deleted (no other provider used it)


def add_provider(
    template_id: str,
    *,
    name: str = "",
    url: str = "",
    key: str = "",
    key_env: str = "",
    key_wanted: bool | None = None,
    replace: bool = False,
) -> Added:
    """Add a provider from a template to the user configuration. `key` is stored in the key
    store; `key_env` names the variable that holds it; with neither, a template that wants a
    key (`key_wanted`, by default the template's own say) takes it from its usual variable."""
    from totem.providers.catalog.templates import template
    from totem.settings.user_config import read_user_config, write_user_config

    try:
        tpl = template(template_id)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    name = (name or tpl.id).strip()
    if not _NAME.fullmatch(name):
        raise ValueError(f"a provider name may hold letters, digits, '_', '.' and '-': {name!r}")
    base_url = _base_url(url, tpl)
    data = read_user_config()
    providers = data.get("providers") or {}
    if not isinstance(providers, dict):
        raise ValueError("`providers` in the user configuration must be a mapping")
    if name in providers and not replace:
        raise ValueError(f"a provider named {name} exists already: choose another name")
    spec: dict[str, Any] = {"kind": tpl.kind}
    if base_url:
        spec["base_url"] = base_url
    wanted = tpl.needs_key if key_wanted is None else key_wanted
    reference, note = _key_entry(name, tpl, key=key.strip(), key_env=key_env.strip(),
                                 wanted=wanted)
    if reference is not None:
        spec["key"] = reference
    if tpl.options:
        spec["options"] = dict(tpl.options)
    providers[name] = spec
    data["providers"] = providers
    path = write_user_config(data)
    return Added(name, tpl.label, base_url, note, path)


def _base_url(url: str, tpl: Template) -> str:
    base_url = (url.strip() or tpl.base_url).rstrip("/")
    if not base_url and tpl.kind != "bedrock":
        raise ValueError(f"{tpl.label} needs a base URL")
    if base_url and not re.match(r"https?://", base_url):
        raise ValueError("the base URL must start with http:// or https://")
    return base_url


def _key_entry(
    name: str, tpl: Template, *, key: str, key_env: str, wanted: bool
) -> tuple[str | None, str]:
    """What `key:` says in the configuration (a reference, never the key), and a note."""
    from totem.settings.keys import key_ref, keys_path, mask, set_key

    if key:
        set_key(name, key)
        return key_ref(name), f"key {mask(key)} stored in {keys_path()}"
    if key_env:
        if not _ENV.fullmatch(key_env):
            raise ValueError(f"not an environment variable name: {key_env!r}")
        return "${env:" + key_env + "}", f"key from ${key_env}"
    if wanted and tpl.key_env:
        return "${env:" + tpl.key_env + "}", f"no key given: it will come from ${tpl.key_env}"
    return None, "no key"


def remove_provider(name: str, *, root: Path | None = None) -> Removed:
    """Remove a provider of the user configuration, and its stored key when no other
    provider uses it. A provider defined in a project's file is not removed here: the error
    names that file (`root` is the project to look in)."""
    from totem.settings.keys import KEY_REF, delete_key
    from totem.settings.user_config import read_user_config, user_config_path, write_user_config

    data = read_user_config()
    providers = data.get("providers") or {}
    if not isinstance(providers, dict) or name not in providers:
        elsewhere = defined_elsewhere(root, name) if root is not None else []
        where = f" It is defined in {', '.join(elsewhere)}: edit that file." if elsewhere else ""
        raise ValueError(f"no provider named {name} in {user_config_path()}.{where}")
    spec = providers.pop(name)
    data["providers"] = providers
    write_user_config(data)
    refs = KEY_REF.findall(str(spec.get("key") or "")) if isinstance(spec, dict) else []
    still = {r for other in providers.values() if isinstance(other, dict)
             for r in KEY_REF.findall(str(other.get("key") or ""))}
    forgotten = [r for r in refs if r not in still and delete_key(r)]
    return Removed(name, bool(forgotten))


def defined_elsewhere(root: Path, name: str) -> list[str]:
    """The configuration files other than the user's that define the provider `name`."""
    from totem.settings.config import config_files
    from totem.settings.user_config import providers_in

    return [str(p) for p in config_files(root)[1:] if p.is_file() and name in providers_in(p)]
