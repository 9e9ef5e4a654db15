"""The help a small local model gets, in one place, behind one protocol (run/assist.py).

The session (session/service.py) gives a small model's agent the small surface
(`surface.py`: few tools, short texts, a short prompt) and a `SmallModelAssist` per run
(`assist.py`: the plan step, reading ahead, the checks of its answers, the project's tests
after a change). The loop calls the assist at fixed points and never asks what model it
runs; run/ and tools/ never import this package.
"""
