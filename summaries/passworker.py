"""A summary worker process: ``python -m summaries.passworker`` (started by ``worker.py``).

One job per line on stdin (``{"slot": name, "force": bool}``), one answer per job
(``{"outcome": label}``) on the descriptor stdout had at start; whatever the pass prints
goes to stderr, so it is never taken for an answer. Exits at end of input.
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
