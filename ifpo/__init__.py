"""ifpo: preference optimization of vision-language models on verified instruction-following data."""

__version__ = "0.1.0"
