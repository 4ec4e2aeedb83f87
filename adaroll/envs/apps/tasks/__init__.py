"""The apps env's task templates: importing this package registers every one of them
(:data:`~adaroll.envs.apps.tasks.base.TEMPLATES`)."""

from adaroll.envs.apps.tasks import admin, calendar, cross, mail, notes, shop, tracker  # noqa: F401
