"""nova-gitops: a GitOps multi-cluster scheduler speaking Elotl Nova's SchedulePolicy API.

Layers (enforced by the import-linter contracts in pyproject.toml):
``api`` (pure data) ← ``scheduling`` (pure decisions) ← ``rendering`` (pure bytes) ←
``sources`` / ``publishing`` (I/O) ← ``controller`` (loop) ← ``cli`` (click).
"""

__version__ = "0.1.0"
