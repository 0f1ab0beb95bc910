"""Training: the trainer (a short driver over small steps), training negatives (sampler), losses and
the typed training settings."""
