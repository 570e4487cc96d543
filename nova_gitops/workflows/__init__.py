"""Orchestration of whole jobs (render a source, publish a render, diff two renders): wires the I/O edges
(``sources``, ``publishing``) to the pure core. Each function here is what one CLI command or one reconcile
step calls."""
