"""ifpo data_builders."""
