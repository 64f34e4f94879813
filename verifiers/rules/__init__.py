"""Rule checkers, one module per benchmark family. Registration happens at import."""
