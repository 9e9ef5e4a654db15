"""Exercism's Python practice exercises, run the way Aider's benchmark runs them, for totem
and Aider side by side on the same llama-server (see README.md)."""
