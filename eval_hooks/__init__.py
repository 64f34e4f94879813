"""ifpo eval_hooks."""
