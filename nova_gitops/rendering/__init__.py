"""Pure rendering: a plan becomes per-cluster manifests, kustomizations, placement.yaml and PLACEMENT.md as
bytes in memory. Nothing here writes files (``publishing.directories`` and the git writer do)."""
