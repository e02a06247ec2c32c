"""A summary worker process: ``python -m summaries.passworker`` (started by ``worker.py``).

Reads one job per line on stdin (``{"slot": name, "force": bool}``) and answers one line
per job (``{"outcome": label}``) on the file descriptor stdout had at start; everything the
pass prints or logs goes to stderr, so nothing it writes can be taken for an answer. It
exits at end of input (its parent went away or stops it). It runs in its own session
(the parent starts it so), so a Ctrl-C typed at the parent's terminal never reaches it:
the parent decides what an interrupt means.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # stray prints of the pass land on stderr, never in the protocol
    sys.stdout = sys.stderr
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kirocrew_site.settings")
    import django

    django.setup()
    from django.db import close_old_connections

    from summaries.tasks import summary_run

    for line in sys.stdin:
        job = json.loads(line)
        close_old_connections()
        label = summary_run(str(job["slot"]), force=bool(job.get("force")))
        answers.write(json.dumps({"outcome": label}) + "\n")


if __name__ == "__main__":
    main()
