"""How much of a transcript the prompt may carry: tied to the model's context window.

``KIROCREW_SUMMARY_CONTEXT_TOKENS`` names the window; the transcript gets what is left of
it after the instructions and the reply's reserve, at a conservative characters-per-token
rate. A server that still answers "context length exceeded" (its tokenizer counts more
tokens than the estimate) gets a shorter transcript, a bounded number of times, so a long
session still gets a summary. Unset (0), the budget is the fixed ``MAX_INPUT_CHARS``.
"""

from __future__ import annotations

from typing import Final

from .extract import MAX_INPUT_CHARS
from .prompt import build_prompt

#: Code, JSON and non-English text run nearer 3 characters per token than English's 4:
#: estimating low leaves room rather than overflowing.
CHARS_PER_TOKEN: Final = 3
#: Below this a transcript says too little to summarize; the budget never shrinks past it.
MIN_INPUT_CHARS: Final = 4_000
#: Shorter retries after a context overflow, at most (each halves the budget).
OVERFLOW_SHRINKS: Final = 2
#: The system line and the chat template's own tokens.
TEMPLATE_TOKENS: Final = 64


def input_budget(context_tokens: int, reply_tokens: int) -> int:
    """The transcript's share of the prompt, in characters, for a window of
    ``context_tokens`` of which ``reply_tokens`` are kept for the reply."""
    if context_tokens <= 0:
        return MAX_INPUT_CHARS
    # Measured rather than assumed: the instructions are whatever the prompt holds today.
    instructions = -(-len(build_prompt((), 0)) // CHARS_PER_TOKEN)
    left = context_tokens - reply_tokens - instructions - TEMPLATE_TOKENS
    return max(MIN_INPUT_CHARS, left * CHARS_PER_TOKEN)


def shrunk_budget(budget: int) -> int | None:
    """The budget for the retry after an overflow, or None when it cannot shrink further."""
    if budget <= MIN_INPUT_CHARS:
        return None
    return max(MIN_INPUT_CHARS, budget // 2)
