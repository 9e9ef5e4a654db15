"""Small local models on micro-tasks: fixtures, checks and a runner (see README.md)."""
