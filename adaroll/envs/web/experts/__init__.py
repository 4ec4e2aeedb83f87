"""Scripted experts for the curated MiniWoB++ tasks.

Each expert is a function ``(page) -> Action`` that plans the *next* action from the page's
current state, so it can take over from any state (reset, a checkpoint, a policy's mistakes).
Experts are privileged: they read the DOM, page variables and ``core.getUtterance()`` through
:meth:`WebEnv.evaluate`; but they act only through the coordinate :class:`Action` model, like a
policy. A target is tapped at a point where ``document.elementFromPoint`` hits it (so covered
or clipped parts are avoided); an element scrolled out of its container is first brought into
view with ``swipe``.

Verification: ``python -m adaroll.envs.web.experts --seeds 5`` runs every curated task's expert
on seeds ``0..4`` through the env and reports the rate the task's own reward accepted.
"""

from adaroll.envs.web.experts import (  # noqa: F401 - importing a page family registers its experts
    clicks,
    forms,
    multi_page,
    pickers,
    reading,
)
from adaroll.envs.web.experts.page import EXPERTS, HELPERS_JS, Expert, ExpertError, Page, expert
from adaroll.envs.web.experts.sweep import main, run_expert_episode, verify

__all__ = [
    "EXPERTS",
    "HELPERS_JS",
    "Expert",
    "ExpertError",
    "Page",
    "expert",
    "main",
    "run_expert_episode",
    "verify",
]
