"""Evaluation: scoring (answer cache, batched pairs), metrics, evaluating a trained run, and the
typed evaluation settings."""
