"""The micro-tasks: one module each, with FILES, PROMPT, STEPS, check() and solve()."""
