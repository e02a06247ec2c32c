"""Log hygiene on the console handler, so it applies to every logger, Django's included.

- A ``RecursionError`` keeps its last few frames: the whole traceback repeats the same
  frames about a thousand times (some 150 KB per request).
- A refused request (4xx) is one line: Django logs a ``PermissionDenied`` with its
  traceback (~37 lines) though there is nothing to debug.
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
    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if record.exc_info and isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
