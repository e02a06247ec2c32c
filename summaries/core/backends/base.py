"""The contract every summarizer backend meets (raw reply text: the caller parses it, so
every backend's output goes through the same checks), and its typed errors, whose messages
never hold the API key or any of the prompt: the prompt is the user's conversation, and
logs outlive it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from summaries.core.transcript_turn import TranscriptTurn


@runtime_checkable
class SummaryBackend(Protocol):
    """``name`` is what a stored summary records as its ``model``. ``generate`` gets the
    prompt and the same transcript as turns (an offline backend reads those instead of
    re-parsing prose)."""

    @property
    def name(self) -> str: ...

    def generate(self, prompt: str, turns: Sequence[TranscriptTurn]) -> str: ...


class BackendError(Exception):
    """The backend produced no usable reply text. The message is safe to log."""


class BackendTimeout(BackendError):
    """The model server did not answer (connect or read) within the timeout."""


class BackendUnavailable(BackendError):
    """The model server could not be reached (refused, DNS) or dropped the connection."""


class BackendEmptyStream(BackendUnavailable):
    """A 200 event stream that ended before its first event. llama_cpp.server answers a
    streamed prompt longer than its context window this way (the same request unstreamed
    gets 400 ``context_length_exceeded``), so the request is asked once more unstreamed."""


class BackendHTTPError(BackendError):
    """A non-success HTTP status. ``code`` is the server's short machine-readable error
    code when it sent one (``"model_not_found"``); free-text messages are never copied,
    since a server may echo the request back in them."""

    #: Seconds before the one retry, set by the backend whose rule retries this answer
    #: (a 5xx; Anthropic's ``retry-after``); None: not retried.
    retry_wait: float | None = None

    def __init__(
        self,
        status: int,
        message: str | None = None,
        *,
        code: str | None = None,
        about_format: bool = False,
    ) -> None:
        self.status = status
        self.code = code
        # The error body names the requested output format (``response_format`` /
        # ``json_schema``): the server does not support it, another format may pass.
        self.about_format = about_format
        super().__init__(self._message(status, code) if message is None else message)

    def _message(self, status: int, code: str | None) -> str:
        return f"model server answered HTTP {status}" + (f" ({code})" if code else "")

    def __reduce__(self) -> tuple[type[BackendHTTPError], tuple[int, str], dict[str, object]]:
        # The default Exception pickling calls cls(*args) == cls(message), which
        # would put the message into ``status``. Celery pickles exceptions that
        # escape a task, so keep the round trip exact.
        return (type(self), (self.status, str(self)), {"code": self.code})


class BackendBadReply(BackendError):
    """The server answered, but not with usable reply text (not JSON, no content, ...)."""


class BackendRunaway(BackendBadReply):
    """The reply ran to the output limit (``finish_reason: length``, ``stop_reason:
    max_tokens``, a body or stream over the size cap): cut JSON, never a summary. The pass
    backs off for the slot instead of paying for the same runaway on every turn end."""


class BackendContextOverflow(BackendHTTPError):
    """The server refused the prompt as longer than the model's context window. The pass
    shrinks the transcript it sends and asks again, a bounded number of times."""

    def _message(self, status: int, code: str | None) -> str:
        return (
            f"the prompt is longer than the model's context window (HTTP {status}); "
            "KIROCREW_SUMMARY_CONTEXT_TOKENS sizes it"
        )
