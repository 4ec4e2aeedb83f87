"""The experiment runner's worker processes end with the runner; its progress line says how
long the rest will take."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

RUNNER = """
import os, sys, time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from adaroll.experiments.runner import die_with_parent

if __name__ == "__main__":
    with ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=die_with_parent,
                             initargs=(os.getpid(),)) as pool:
        print(pool.submit(os.getpid).result(), flush=True)
        pool.submit(time.sleep, 120)
        time.sleep(120)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead for our purpose
        return stat.read().split(")")[-1].split()[0] != "Z"


def test_a_worker_ends_when_its_runner_is_killed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "runner.py"
    script.write_text(RUNNER)
    runner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        worker = int(runner.stdout.readline())  # type: ignore[union-attr]
        assert alive(worker)
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=30)
        deadline = time.monotonic() + 30
        while alive(worker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(worker)
    finally:
        runner.kill()


def test_time_left_reads_the_pace_of_runs_trained_in_this_invocation() -> None:
    from adaroll.experiments.runner import time_left

    # 2 runs trained in 20 min of wall time (jobs in parallel included): 3 more take 30 min
    assert time_left(elapsed=1200, trained=2, remaining=3) == "; about 30 min left at this pace"
    assert time_left(elapsed=5, trained=0, remaining=3) == ""  # only resumed runs so far
    assert time_left(elapsed=1200, trained=2, remaining=0) == ""  # the last one: nothing to say
