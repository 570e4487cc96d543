"""I/O at the edge: writing renders to a directory or committing them to a git repository."""
