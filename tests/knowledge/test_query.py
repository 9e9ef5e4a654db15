"""what the search before the first step looks for: filler words dropped (Spanish and
English), Spanish topic words translated, the product chosen, the component recipe."""

from __future__ import annotations

import pytest

from totem.knowledge.base import Query
from totem.knowledge.totaljs.query import plan


@pytest.mark.parametrize(
    ("prompt", "text", "product"),
    [
        ("quiero hacer un componente jcomponent", "create a component", "jcomponent"),
        ("Quiero hacer un componente jComponent de contador, por favor",
         "create a component counter", "jcomponent"),
        ("make a counter component", "create a component counter", "jcomponent"),
        ("Please write a new jComponent component for a date picker",
         "create a component date picker", "jcomponent"),
        ("How do I define a route with a parameter in Total.js?", "route parameter", "total5"),
        ("crear una acción para guardar pedidos en la base de datos",
         "action save orders database", "total5"),
        ("¿Cómo valido un formulario con jComponent?", "validate form", "jcomponent"),
        ("how do I bind an input to a path with jComponent", "bind input path", "jcomponent"),
        ("necesito subir archivos al servidor", "upload files server", "total5"),
        ("show me how schemas and actions work together", "schemas actions together", "total5"),
    ],
)
def test_prompts_become_searches(prompt: str, text: str, product: str) -> None:
    query = plan(prompt)
    assert query is not None
    assert (query.text, query.product) == (text, product)


def test_a_component_request_asks_for_the_recipe() -> None:
    assert plan("hazme un componente de calendario") == Query(
        "create a component calendar", "jcomponent", "jComponent 20", "component")
    asked = plan("what is a component in jComponent")  # a question, not a request to make one
    assert asked is not None and asked.recipe == "" and asked.text == "component"


@pytest.mark.parametrize(
    "prompt",
    [
        "hola", "hello", "fix it", "gracias, muy bien", "sleep please", "", "   ",
        "use the echo tool",  # nothing of Total.js or jComponent: never sent away
        "what does hello.txt say?", "tell me a story about dragons",
        "read the four big files",  # one common word of the vocabulary is no question
        "look at the data",
    ],
)
def test_short_and_unrelated_prompts_are_not_searched(prompt: str) -> None:
    assert plan(prompt) is None
