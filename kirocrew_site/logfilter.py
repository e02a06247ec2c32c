"""Log hygiene: a ``RecursionError`` is logged with the last few frames, never all of them.

A stack overflow's traceback repeats the same frames about a thousand times (some 150 KB
per request); logged whole on every request it floods the log and hides everything else.
Installed on the console handler (``settings.LOGGING``), so it applies to every logger
that reaches it, Django's request logger included.
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
