"""Pure scheduling: matching objects to policies, grouping, demand, per-node fit, placing, spreading,
overrides, and the planner that ties them together.

Nothing here does I/O, reads a clock or the environment. ``planning.plan`` takes a ``SourceSet`` (and the
previous placement) and returns a ``plans.Plan``; the same inputs always give the same plan.
"""
