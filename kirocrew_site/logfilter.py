"""Log hygiene, installed on the console handler (``settings.LOGGING``), so it applies to
every logger that reaches it, Django's request logger included.

- A ``RecursionError`` is logged with the last few frames, never all of them: a stack
  overflow's traceback repeats the same frames about a thousand times (some 150 KB per
  request); logged whole on every request it floods the log and hides everything else.
- A refused request (4xx) is one line: Django logs a ``PermissionDenied`` (403) or a
  ``BadRequest`` with its traceback, ~37 lines for a non-staff user opening /settings/.
  The request was refused as designed; there is nothing to debug.
"""

from __future__ import annotations

import logging
import traceback

KEEP_FRAMES = 8


class TrimRecursionTracebacks(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, RecursionError):
            tail = "".join(traceback.format_exception(exc, limit=-KEEP_FRAMES))
            record.msg = f"{record.getMessage()}\n(last {KEEP_FRAMES} frames)\n{tail.rstrip()}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


class RefusalsInOneLine(logging.Filter):
    """Drop the traceback of a request log record whose answer was a 4xx."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if record.exc_info and isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
