"""AdaRoll's routing (pivots, Local/Suffix/Root starts, snapshot restores, the cost ledger) for
people who train with another framework: TRL (:mod:`adaroll.integrations.trl`) or verl
(:mod:`adaroll.integrations.verl`). The framework-free pieces both share live in
:mod:`adaroll.integrations.starts` (opening a start) and :mod:`adaroll.integrations.feed`
(the scheduler behind a stream of rows). See docs/integrations.md."""
