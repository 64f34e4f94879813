"""The bundled sample benchmark: procedurally generated media with known ground truth."""

from __future__ import annotations

from typing import Any

__all__ = ["generate_media"]


def __getattr__(name: str) -> Any:
    # Lazy, so `python -m ifpo.data_builders.sample_benchmark.media` does not import the module twice.
    if name == "generate_media":
        from ifpo.data_builders.sample_benchmark.media import generate_media

        return generate_media
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
