"""Pure: edits of a user's own YAML text that keep the file as it was (docs/editing.md).

Text in, text out: nothing here reads or writes a file, reads a clock or the environment. The commands that
edit a source (``nova-gitops pin``, ``split``, ``cordon``...) read and write files in
``nova_gitops.workflows.editing``; this package only turns one file's text into its edited text.
"""
