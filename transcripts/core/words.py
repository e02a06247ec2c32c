"""Counted nouns for messages people read ("1 intent", "2 intents"); pure, no Django."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str = "") -> str:
    """``counted(1, "turn")`` → ``"1 turn"``; ``counted(2, "turn")`` → ``"2 turns"``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
