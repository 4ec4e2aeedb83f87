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
from adaroll.envs.mobile.tasks.base import (
    TEMPLATES,
    TaskInstance,
    TaskTemplate,
    expert_rollout,
    get_template,
    instantiate,
    normalise_answer,
    register,
)

__all__ = ["TEMPLATES", "TaskInstance", "TaskTemplate", "expert_rollout", "get_template",
           "instantiate", "normalise_answer", "register"]  # fmt: skip
