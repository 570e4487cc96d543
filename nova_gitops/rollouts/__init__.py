"""Pure progressive rollout: which clusters form which wave, whether a wave passed its gate, and which
release refs to move next (docs/rollouts.md).

Nothing here does I/O, reads a clock or the environment: the controller reads git (refs, the agents'
reports, the rollout record and requests on ``nova/rollout`` of the rendered repository), passes what it
read and ``now`` in, and writes back what ``stepping.step`` decided. Because the decision is a function of
those inputs alone, and applying it then asking again decides nothing new, a controller killed at any
point, or a second controller after a lost lease, resumes without releasing twice or skipping a gate.

- ``waves``: ``waves_for(strategy, clusters)``, the ordered waves with the implicit last one;
- ``health``: a cluster's report judged against the commit released to it (healthy, waiting, failed);
- ``records``: the rollout record and the people's requests (pause, resume, promote, abort), as data; the
  requests read strictly (a file that does not read is a pause);
- ``trust``: what of the record a step believes (a pass it did not observe releases nothing);
- ``decisions``: what a step reads (``Situation``) and decides (``Decision``: ref moves, the new record,
  reasons per wave and cluster);
- ``stepping``: ``step(strategy, waves, situation, now) -> Decision``, the gate logic;
- ``plans``: the wave plan of a change, for ``diff`` and PLACEMENT.md;
- ``requesting``: people's requests (pause, resume, promote, abort) as changes of ``Requests``, and when a
  request has nothing to act on;
- ``statuses``: what ``nova-gitops rollout status`` shows, from a step's inputs and its decision.
"""
