"""A request in flight at a whole-app dump completes in every branch (issue 44): the page posts
a note and the snapshot is taken while the notes server is still waiting its latency. Each
branch's own server then writes the note to the branch's own database and answers the branch's
own page over the restored connection ("Note created"), as the parent's does; the databases as
dumped hold no note. With the browser backend's ``--tcp-close`` the server would still write but
the page would show "Failed to fetch".

Under CI (``CI=true``) missing CRIU/Chromium/root FAIL these tests (``tests.components``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaroll.actions import Action
from adaroll.envs.apps.state import diff, read_database
from adaroll.envs.base import TaskSpec
from adaroll.envs.web.input_events import execute
from adaroll.snapshots.criu.config import STATE_SUBDIR
from tests.components import require_criu_stack

pytestmark = [pytest.mark.criu, pytest.mark.web]

TASK = TaskSpec("apps", "notes.create", 5)
LATENCY_SCALE = 20
"""A note's POST answers after 80 ms x 20 = 1.6 s: the dump (0.2-0.7 s here) falls inside it."""
SETTLE_MS = 3000
"""Above every scaled latency (a list page: 60 ms x 20), so that each step still settles."""
BODY = "Posted while the snapshot was taken"
N_BRANCHES = 3


def tap(obs, role: str, text: str) -> Action:
    (el,) = [e for e in obs.elements if e.role == role and e.text == text]
    return Action.tap(*el.center)


def notes(env) -> list[str]:
    """Bodies of the notes the env's databases gained since the task's start."""
    return [c.after["body"] for c in diff(env.start_state(), env.app_state())]


def messages(env) -> list[str]:
    return [e.text for e in env.observe().elements if e.role in ("status", "alert")]


def test_a_post_in_flight_at_the_dump_completes_in_every_branch():
    require_criu_stack()
    from adaroll.envs.apps import AppsEnv, AppsSuite
    from adaroll.snapshots.criu.apps import AppCriuSnapshots

    suite = AppsSuite()
    backend = AppCriuSnapshots(max_branches=N_BRANCHES + 1)
    parent = AppsEnv(latency_scale=LATENCY_SCALE, settle_timeout_ms=SETTLE_MS)
    branches = []
    try:
        parent.reset(options={"task": TASK})
        for _ in range(3):  # "New note", the title field, the title typed
            parent.step(suite.expert_action(parent))
        obs, *_ = parent.step(tap(parent.observe(), "textbox", "Body"))
        obs, *_ = parent.step(Action.type_text(BODY))
        execute(parent, tap(obs, "button", "Create note"))  # the input only: no settle
        assert parent.pending_work() >= 1  # the POST is waiting for its answer

        ref = backend.save(parent, ())

        dumped = read_database(str(Path(ref.meta["image_dir"], STATE_SUBDIR, "app", "notes.db")))
        assert BODY not in str(dumped)  # the write came after the dump
        assert ref.meta["unsettled"] >= 1
        assert notes(parent) == [BODY] and "Note created" in messages(parent)
        branches = [backend.restore(ref) for _ in range(N_BRANCHES)]
        for b in branches:
            assert b.restore_info["check"].ok, b.restore_info["check"].describe()
            assert notes(b) == [BODY]  # written once, by the branch's own server
            assert "Note created" in messages(b)  # and answered to the branch's own page
            assert b.observe().element_tree_hash() == ref.element_tree_hash
        assert notes(parent) == [BODY]  # no branch's write reached the parent
    finally:
        for b in branches:
            b.close()
        parent.close()
        backend.close()
