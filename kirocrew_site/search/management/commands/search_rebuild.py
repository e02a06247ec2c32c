"""``manage.py search_rebuild``: the search index again from the transcript files."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from kirocrew_site.search.services import search_rebuild


class Command(BaseCommand):
    help = (
        "Rebuild the full-text search index from the transcript files and stored summaries "
        "(the files are the truth; the index is derived)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        def progress(done: int) -> None:
            if done % 100 == 0:
                self.stdout.write(f"  {done} sessions…")

        report = search_rebuild(progress=progress)
        missing = f" ({report.missing} without a transcript file)" if report.missing else ""
        self.stdout.write(
            self.style.SUCCESS(
                f"Indexed {report.rows} rows of {report.sessions} sessions{missing}."
            )
        )
