"""Pure rendering: a plan becomes per-cluster manifests, kustomizations, one file per ScheduleGroup under
``placement/`` with each policy's page, the ``placement.yaml`` index and ``PLACEMENT.md``, as bytes in memory.
Nothing here writes files (``publishing.directories`` and the git writer do)."""
