"""A single-process Chromium (WebEnv option ``single_process``) snapshotted with CRIU, for real:
its branches pass verification, are independent, finish the task with the expert, and hold
fewer processes than a default browser's.

Under CI (``CI=true``) missing CRIU/Chromium/root FAIL these tests (``tests.components.require_criu_stack``)."""

from __future__ import annotations

import pytest

from adaroll.envs.base import TaskSpec
from tests.components import require_criu_stack
from tests.processes import left_behind, live_processes, namespace_pids

pytestmark = [pytest.mark.criu, pytest.mark.web]

TASK = TaskSpec("web", "login-user", 3)


def test_single_process_branches_verify_and_finish_the_task() -> None:
    require_criu_stack()
    from adaroll.envs.base import SUITES
    from adaroll.envs.web import WebEnv
    from adaroll.snapshots.criu import CriuSnapshots

    before = live_processes()
    suite = SUITES.get("web")()
    backend = CriuSnapshots(max_branches=4, verify_screenshot=True)
    single, default = WebEnv(single_process=True), WebEnv()
    try:
        assert len(namespace_pids(single.browser.pid)) < len(namespace_pids(default.browser.pid))
        default.close()
        single.reset(options={"task": TASK})
        prefix = []
        for _ in range(2):
            prefix.append(suite.expert_action(single))
            single.step(prefix[-1])
        ref = backend.save(single, tuple(prefix))
        branches = [backend.restore(ref) for _ in range(2)]
        assert all(b.restore_info["check"].ok for b in branches)  # tree and screenshot match
        assert all(b.config.single_process for b in branches)
        done = []
        for branch in branches:
            while True:
                _, _, terminated, truncated, info = branch.step(suite.expert_action(branch))
                if terminated or truncated:
                    done.append(info.get("success"))
                    break
            branch.close()
        assert done == [True, True] and single.steps_taken == 2  # the original went on unchanged
        assert backend.live_branches() == 0
    finally:
        single.close()
        default.close()
        backend.close()
    assert left_behind(before, "chromium", "criu") == {}
