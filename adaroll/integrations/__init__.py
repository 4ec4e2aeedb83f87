"""AdaRoll's routing (pivots, Local/Suffix/Root starts, snapshot restores, the cost ledger) for
people who train with another framework: TRL (:mod:`adaroll.integrations.trl`) or verl
(:mod:`adaroll.integrations.verl`). Adapters only: the starts they open are the rollout layer's
(:class:`adaroll.rollout.sessions.Starts`, the same starts AdaRoll's own collector uses), their
groups are billed by AdaRoll's one bill writer (:func:`adaroll.training.bill.bill_groups`), and
they import no env or snapshot module themselves (tests/test_architecture.py checks it). What
both adapters share: :mod:`adaroll.integrations.feed` (the scheduler behind a stream of rows) and
:mod:`adaroll.integrations.rows` (a sample as text). See docs/integrations.md."""
