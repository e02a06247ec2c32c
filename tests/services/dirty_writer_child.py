"""A slot writer for the dirty-lease crash test, run as its own process.

``python -m tests.services.dirty_writer_child <slot>`` appends one row to the slot through
the turn service (which takes the slot's dirty lease), writes half of the row's bytes,
prints ``MID`` and hangs there until the parent kills it: a real writer stopped inside
its write, with the lease held and a torn line on disk. Configured by the environment
(``DATABASE_URL``, ``KIROCREW_HOME``, ``KIROCREW_SLOT_DIRTY_TTL``…) like the server.
"""

from __future__ import annotations

import os
import sys
import time

import django


def main(slot_name: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kirocrew_site.settings")
    django.setup()
    from transcripts.core import store as store_module
    from transcripts.models import Slot
    from transcripts.services import slot_append_row

    def half_then_hang(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])
        print("MID", flush=True)
        time.sleep(600)  # the parent kills it long before

    setattr(store_module, "write_all", half_then_hang)  # noqa: B010 (no typed attribute)
    slot = Slot.objects.select_related("session").get(name=slot_name)
    slot_append_row(slot=slot, role="assistant", content="a long answer " * 400)
    print("DONE", flush=True)  # never reached: the write above hangs


if __name__ == "__main__":
    main(sys.argv[1])
