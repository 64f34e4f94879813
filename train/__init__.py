"""ifpo train."""
