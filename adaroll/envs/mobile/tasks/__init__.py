"""Task templates of the mobile env, one module per app (importing registers them)."""

from adaroll.envs.mobile.tasks import (  # noqa: F401  (registration)
    calendar,
    clock,
    contacts,
    files,
    mail,
    messages,
    notes,
    settings,
    shop,
)
from adaroll.envs.mobile.tasks import long as long  # noqa: F401  (registration; after the apps' templates)
from adaroll.envs.mobile.tasks.base import (
    FAMILIES,
    LONG_TEMPLATES,
    TEMPLATES,
    TaskInstance,
    TaskTemplate,
    all_templates,
    expert_rollout,
    get_template,
    instantiate,
    normalise_answer,
    register,
)

__all__ = [
    "FAMILIES",
    "LONG_TEMPLATES",
    "TEMPLATES",
    "TaskInstance",
    "TaskTemplate",
    "all_templates",
    "expert_rollout",
    "get_template",
    "instantiate",
    "normalise_answer",
    "register",
]
