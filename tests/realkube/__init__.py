"""Test utilities for real Kubernetes API servers (``../shared/realk8s``): a stand-in kubelet.

A real control plane without nodes leaves every pod Pending. ``kubelet.StandInKubelet`` registers Nodes,
keeps them alive and runs the pods kube-scheduler binds to them; ``podstates`` says what a kubelet writes
into a pod's status (Running and Ready, or crash-looping, image-pull failures, exits) and is shared with the
fake API server's simulation, so a test asks for a state the same way on both; ``fixtures`` offers both
behind one pytest fixture. Nothing here imports pytest but ``fixtures``: the demo imports the kubelet too.
"""
