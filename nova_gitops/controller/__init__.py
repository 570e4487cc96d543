"""The reconcile loop: watch sources, read agents' status, plan, render, publish."""
