"""``python -m nova_gitops.cli``: the same as the ``nova-gitops`` console script."""

from nova_gitops.cli.main import main

main()
