"""I/O at the edge: reading a source (directory, git repository, control plane) into ``Document``s."""
