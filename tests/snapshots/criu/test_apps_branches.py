"""Whole-app snapshots, for real (issue 44's must-show): one mid-episode CRIU snapshot of an
apps env - Chromium, the app servers and their SQLite databases, dumped as one unit - restored
into 8 branches; each branch makes a different write through its own page and server, and each
branch's database holds exactly its own write while the parent's holds none (and a later write
in the parent reaches no branch). The databases are read the judge's way: from the files, in
each branch's own mount namespace.

Under CI (``CI=true``) missing CRIU/Chromium/root FAIL these tests (``tests.components``)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from adaroll.actions import Action
from adaroll.envs.apps.state import diff
from adaroll.envs.base import TaskSpec
from tests.components import require_criu_stack

pytestmark = [pytest.mark.criu, pytest.mark.web]

TASK = TaskSpec("apps", "notes.create", 5)
PREFIX_STEPS = 3  # "New note", the title field, the title typed; body and save not yet
N_BRANCHES = 8


def tap(obs, role: str, text: str) -> Action:
    (el,) = [e for e in obs.elements if e.role == role and e.text == text]
    return Action.tap(*el.center)


def write_note_body(env, text: str) -> None:
    """Through the page: the body field, the text, "Create note" (a POST to the notes server)."""
    obs = env.observe()
    obs, *_ = env.step(tap(obs, "textbox", "Body"))
    obs, *_ = env.step(Action.type_text(text))
    env.step(tap(obs, "button", "Create note"))


def inserted(env) -> list[dict]:
    """The rows the env's databases gained since the task's start (any app, any table)."""
    changes = diff(env.start_state(), env.app_state())
    assert all(c.kind == "insert" for c in changes), [c.describe() for c in changes]
    return [c.after for c in changes]


@pytest.fixture(scope="module")
def snapshot():
    """(backend, parent env, suite, ref): the snapshot after PREFIX_STEPS expert steps."""
    require_criu_stack()
    from adaroll.envs.apps import AppsEnv, AppsSuite
    from adaroll.snapshots.criu.apps import AppCriuSnapshots

    suite = AppsSuite()
    backend = AppCriuSnapshots(max_branches=N_BRANCHES + 2)
    env = AppsEnv()
    try:
        env.reset(options={"task": TASK})
        prefix = []
        for _ in range(PREFIX_STEPS):
            action = suite.expert_action(env)
            prefix.append(action)
            env.step(action)
        ref = backend.save(env, tuple(prefix))
        yield backend, env, suite, ref
    finally:
        env.close()
        backend.close()


def test_eight_branches_each_hold_exactly_their_own_write_and_the_parent_none(snapshot):
    backend, parent, suite, ref = snapshot
    assert ref.backend == "app-criu" and ref.meta["state_checksum"]
    with ThreadPoolExecutor(2) as pool:
        branches = list(pool.map(lambda _: backend.restore(ref), range(N_BRANCHES)))
    try:
        assert len({b.browser.pid for b in branches} | {parent.browser.pid}) == N_BRANCHES + 1
        for b in branches:
            assert b.restore_info["check"].ok, b.restore_info["check"].describe()
            assert b.steps_taken == PREFIX_STEPS and b.instruction == parent.instruction
            assert b.observe().element_tree_hash() == ref.element_tree_hash
        for i, b in enumerate(branches):  # a different write in each branch
            write_note_body(b, f"Written in branch {i}")
        for i, b in enumerate(branches):
            (row,) = inserted(b)  # exactly one new row: its own note
            assert row["body"] == f"Written in branch {i}" and row["folder"] == "Personal"
        assert inserted(parent) == []  # the parent holds none of them
        # a write in the parent after the branches reaches none of them
        while True:
            _, _, terminated, truncated, info = parent.step(suite.expert_action(parent))
            if terminated or truncated:
                break
        assert info["success"]
        (row,) = inserted(parent)
        assert not row["body"].startswith("Written in branch")
        for i, b in enumerate(branches):
            assert [r["body"] for r in inserted(b)] == [f"Written in branch {i}"]
    finally:
        for b in branches:
            b.close()
    assert backend.live_branches() == 0
    assert not any(b.browser.alive() for b in branches)


def test_a_branch_finishes_the_task_with_the_expert_and_is_judged_on_its_own_database(snapshot):
    backend, _, suite, ref = snapshot
    branch = backend.restore(ref)
    try:
        while True:
            _, reward, terminated, truncated, info = branch.step(suite.expert_action(branch))
            if terminated or truncated:
                break
        assert (reward, info["success"], info["judge"]) == (1.0, True, "success")
    finally:
        branch.close()


def test_a_restore_finds_the_branch_servers_in_one_walk_of_its_processes(snapshot, monkeypatch):
    """The verification looks for every app's server in one walk of the branch's process tree
    (a walk reads each Chromium thread's children file: one per app cost ~12 ms a restore)."""
    import adaroll.snapshots.criu.apps as app_criu

    backend, _, _, ref = snapshot
    walks = []
    real = app_criu.server_processes

    def counted(browser, apps=()):
        walks.append(browser.pid)
        return real(browser, apps)

    monkeypatch.setattr(app_criu, "server_processes", counted)
    branch = backend.restore(ref)
    try:
        assert branch.restore_info["check"].ok
        assert walks == [branch.browser.pid]
    finally:
        branch.close()
