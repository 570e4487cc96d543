"""Pure data: the resource shapes (SchedulePolicy, Cluster, workloads), selectors, quantities, field paths,
and their validation.

Nothing in this package does I/O, reads a clock or the environment: functions take data and return data.
YAML *text* is parsed here (``loading``), but reading files is the job of ``nova_gitops.sources``.
``nova_agent`` shares this package (and only this package) with ``nova_gitops``.
"""
