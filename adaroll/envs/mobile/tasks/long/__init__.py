"""The long-horizon family of mobile task templates (experts of 12-40 steps), registered in
:data:`~adaroll.envs.mobile.tasks.base.LONG_TEMPLATES`: cross-app carries (:mod:`.carry`),
multi-item edits (:mod:`.multi`) and forms and routines over several screens (:mod:`.routines`).
They are never in the default suite's pools; a suite takes them through its ``templates``
option."""

from adaroll.envs.mobile.tasks.long import carry, multi, routines  # noqa: F401  (registration)
from adaroll.envs.mobile.tasks.long.parts import LongTemplate, Part, check_parts

__all__ = ["LongTemplate", "Part", "check_parts"]
