"""A model server on this computer or the local network: what makes it local (address.py),
what it says it serves (serverinfo.py, served.py), how a small model on it samples
(sampling.py), and constrained steps where it can hold an answer to a JSON schema
(stepmode.py)."""
