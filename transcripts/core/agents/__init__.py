"""Readers of other agents' session files (Claude Code, Codex CLI): pure, no Django.

Each converter turns one source record (a parsed JSON line) into rows of this project's
own format and says whether a turn ended cleanly there. Every record lands in exactly
one tally bucket, so an import can prove it accounted for the whole file.
"""
