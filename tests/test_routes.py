"""The route vocabulary (adaroll/routes.py): one table maps each route to the start of its
training groups and back, the promotion order is the declaration order, and the plain values
(what ledgers, summaries and scheduler states hold) never change."""

from __future__ import annotations

import json

import pytest

from adaroll.routes import ROUTED, VANILLA, Route, StartKind


def test_each_route_maps_to_its_start_and_back() -> None:
    assert [route.start for route in ROUTED] == [
        StartKind.ONESTEP,
        StartKind.SUFFIX,
        StartKind.ROOT,
    ]
    assert all(route.start.route is route for route in ROUTED)
    assert {start.route for start in StartKind} == set(ROUTED)
    with pytest.raises(ValueError, match="unrouted task has no training start"):
        _ = Route.UNROUTED.start


def test_promotion_order_and_serialised_values_are_fixed() -> None:
    assert [route.rank for route in Route] == [0, 1, 2, 3]
    assert Route.UNROUTED.rank < Route.LOCAL.rank < Route.SUFFIX.rank < Route.ROOT.rank
    assert [r.value for r in Route] == ["unrouted", "local", "suffix", "root"]
    assert [s.value for s in StartKind] == ["onestep", "suffix", "root"]
    assert VANILLA == "vanilla"
    assert json.dumps({Route.LOCAL: StartKind.ONESTEP}) == '{"local": "onestep"}'
