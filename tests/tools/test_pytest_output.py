"""A failed pytest comparison said in plain words for a small model."""

from __future__ import annotations

from totem.tools.pytest_output import failed_comparison

SLUG = """    def test_slugify():
>       assert slugify('Hello, World 2024!') == 'hello-world-2024'
E       AssertionError: assert 'Hello-World-2024' == 'hello-world-2024'
E
E         - hello-world-2024
"""


def test_the_call_what_it_returned_and_what_the_test_expects() -> None:
    assert failed_comparison(SLUG) == ("slugify('Hello, World 2024!') returned "
                                       "'Hello-World-2024', but the test expects "
                                       "'hello-world-2024'.")
    flipped = (">       assert 3 == add(1, 1)\nE       assert 3 == 2\n"
               "E        +  where 2 = add(1, 1)")
    assert failed_comparison(flipped) == "add(1, 1) returned 2, but the test expects 3."


def test_anything_else_is_left_alone() -> None:
    assert failed_comparison(">       assert ok\nE       assert False") is None
    assert failed_comparison(">       assert f(1) == g(2)\nE       assert 1 == 2") is None
    assert failed_comparison("5 failed, 8 passed") is None
