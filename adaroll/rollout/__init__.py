"""The one start layer: the scheduler says *what* to run (jobs), this package says *how*, for
every trainer - AdaRoll's own (local or on Ray) and the framework adapters.

* :mod:`~adaroll.rollout.jobs` - jobs, groups, their cost;
* :mod:`~adaroll.rollout.session` - one live start of one sample (context, act, reward, cost);
* :mod:`~adaroll.rollout.starts` - the OneStep, Reset and Branch starts that open sessions from a
  job (restores only through the snapshot cache), looked up by kind in one table;
* :mod:`~adaroll.rollout.episodes` - sessions in lockstep, one policy call per step;
* :mod:`~adaroll.rollout.collector` - seeding, lockstep and retries for a collection of jobs;
* :mod:`~adaroll.rollout.planning` - parallel queues, Root waves, prefetched branches;
* :mod:`~adaroll.rollout.retries` - the retry rule every collector and adapter follows;
* :mod:`~adaroll.rollout.sessions` - the starts one session at a time, for TRL and verl;
* :mod:`~adaroll.rollout.ray_workers` - the same collector on Ray workers (the only module that
  imports Ray).

docs/architecture.md, "One iteration", shows how they fit."""
