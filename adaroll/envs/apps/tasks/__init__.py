"""The apps env's task templates, one module per app plus ``cross`` (tasks across apps);
:mod:`~adaroll.envs.apps.tasks.catalog` registers them all and builds their instances."""
