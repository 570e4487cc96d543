"""nova-agent: pulls its cluster's directory of the rendered repo, applies it, prunes safely, and reports
status back. Shares only ``nova_gitops.api`` with the scheduler."""
