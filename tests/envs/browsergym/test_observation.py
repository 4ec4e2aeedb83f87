"""BrowserGym's accessibility tree -> AdaRoll's element list.

On real pages: the same MiniWoB++ instance (BrowserGym's page seed given to the web env) gives
the same interactive elements - roles, texts, order, bounds within a pixel - through BrowserGym
and through the web env's DOM reader. On a hand-made tree: labels wrapping controls, folded
text, wrappers, scaling and clipping, flags and the element budget."""

from __future__ import annotations

import numpy as np
import pytest

from adaroll.envs.base import TaskSpec
from adaroll.envs.browsergym.observation import axtree_elements

pytestmark = pytest.mark.web


@pytest.fixture(scope="module")
def web():
    from adaroll.envs.web import WebEnv

    with WebEnv() as env:
        yield env


def _node(node_id, role, name="", children=(), bid=None, props=(), **extra):
    node = {
        "nodeId": str(node_id),
        "role": {"value": role},
        "name": {"value": name},
        "childIds": [str(c) for c in children],
        "properties": [{"name": k, "value": {"value": v}} for k, v in props],
    }
    if bid is not None:
        node["browsergym_id"] = bid
    node.update(extra)
    return node


def _obs(nodes, boxes, clickable=(), focused=None):
    props = {
        bid: {"visibility": 0.0 if box is None else 1.0, "bbox": box, "clickable": bid in clickable}
        for bid, box in boxes.items()
    }
    return {
        "axtree_object": {"nodes": nodes},
        "extra_element_properties": props,
        "focused_element_bid": focused,
    }


def test_tree_rules_on_a_hand_made_page() -> None:
    nodes = [
        _node(1, "RootWebArea", "page", [2]),
        _node(2, "generic", "", [3, 4, 7, 9, 11, 13], bid="a"),
        _node(3, "StaticText", "Hello   world"),
        _node(4, "LabelText", "", [5, 6], bid="b"),  # a label wrapping a checkbox
        _node(5, "checkbox", "Tick", bid="c", props=[("checked", "true")]),
        _node(6, "StaticText", "Tick"),
        _node(7, "button", "Go", [8, 10], bid="d", props=[("disabled", True)]),
        _node(8, "StaticText", "Go"),
        _node(10, "image", "arrow", bid="h"),  # clickable, but inside a widget: folds into it
        _node(
            9, "textbox", "", bid="e", props=[("editable", "plaintext"), ("placeholder", "Name")]
        ),
        _node(11, "generic", "", [12], bid="f"),  # scrolled out of view
        _node(12, "StaticText", "gone"),
        _node(13, "generic", "", [14], bid="g"),  # half off the screen
        _node(14, "StaticText", "edge"),
    ]
    boxes = {
        "a": [0, 0, 240, 300],
        "b": [0, 30, 90, 15],
        "c": [0, 30, 15, 15],
        "d": [0, 60, 60, 30],
        "h": [40, 60, 20, 30],
        "e": [0, 120, 150, 30],
        "f": None,
        "g": [180, 285, 120, 60],
    }
    elements = axtree_elements(
        _obs(nodes, boxes, clickable={"b", "c", "d", "e", "h"}, focused="e"), (160, 210), scale=1.5
    )
    got = [(e.id, e.role, e.text, sorted(e.flags)) for e in elements]
    assert got == [
        (0, "text", "Hello world", []),
        (1, "checkbox", "Tick", ["checked", "clickable", "enabled"]),
        (2, "button", "Go", ["clickable"]),
        (3, "textbox", "Name", ["clickable", "editable", "enabled", "focused"]),
        (4, "text", "edge", []),
    ]
    assert elements[0].bounds == (0.0, 0.0, 1.0, 0.9524)  # 240 x 300 / 1.5 clipped to 160 x 210
    assert elements[2].bounds == (0.0, round(40 / 210, 4), 0.25, round(60 / 210, 4))
    assert elements[4].bounds == (0.75, round(190 / 210, 4), 1.0, 1.0)
    # over budget: interactive elements first, reported in document order
    small = axtree_elements(
        _obs(nodes, boxes, clickable={"b", "c", "d", "e"}), (160, 210), scale=1.5, max_elements=2
    )
    assert [(e.id, e.role) for e in small] == [(0, "checkbox"), (1, "button")]


def test_empty_tree_has_no_elements() -> None:
    assert axtree_elements({"axtree_object": {"nodes": []}}, (160, 210)) == ()


@pytest.mark.parametrize(
    "template,seed",
    [("click-test-2", 0), ("click-checkboxes", 1), ("enter-text", 2), ("click-button", 3)],
)
def test_same_interactive_elements_as_the_web_env(bg_env, web, template: str, seed: int) -> None:
    obs, info = bg_env.reset(options={"task": TaskSpec("browsergym", f"miniwob.{template}", seed)})
    page_seed = int(np.random.RandomState(seed).randint(0, 1000000))  # BrowserGym's page seed
    web_obs, web_info = web.reset(options={"task": TaskSpec("web", template, page_seed)})
    assert info["instruction"] == web_info["instruction"]

    def interactive(o):
        return [e for e in o.elements if "clickable" in e.flags]

    ours, theirs = interactive(obs), interactive(web_obs)
    assert [(e.role, e.text) for e in ours] == [(e.role, e.text) for e in theirs]
    for a, b in zip(ours, theirs, strict=True):
        assert np.allclose(a.bounds, b.bounds, atol=1.5 / 160), (a, b)
    assert obs.screen_size == web_obs.screen_size == (160, 210)
