"""The paper's experiments on AdaRoll's environments: ``adaroll experiment NAME`` trains the
runs an experiment needs (several seeds, shared between experiments) and writes its table and
plot; ``adaroll results`` gathers every experiment into docs/RESULTS.md."""
