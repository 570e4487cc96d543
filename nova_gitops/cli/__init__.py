"""Thin click commands: parse options, call one function, map errors to exit codes in one place."""
