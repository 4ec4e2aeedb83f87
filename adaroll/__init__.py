"""AdaRoll: adaptive rollouts for training GUI agents with reinforcement learning."""

__version__ = "0.1.0"
