"""The error every configuration problem raises: a sentence for a person, naming the file
and the setting."""

__all__ = ["ConfigError"]


class ConfigError(Exception):
    pass
