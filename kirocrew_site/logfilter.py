"""Log hygiene on the console handler (so every logger, Django's included): a
``RecursionError`` keeps its last frames (the whole one repeats ~1000 frames, ~150 KB per
request), and a refused request (4xx) is one line, not Django's ~37-line traceback."""

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
