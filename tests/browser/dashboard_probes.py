"""Page probes the dashboard browser tests share: POSTs to the summary endpoint, and a
marker that a reload would erase."""

from __future__ import annotations

from typing import Any


def summary_posts(page: Any) -> list[str]:
    seen: list[str] = []
    page.on(
        "request",
        lambda r: seen.append(r.url) if r.method == "POST" and r.url.endswith("/summary") else None,
    )
    return seen


def mark_page(page: Any) -> None:
    """A marker that a reload would erase: proves updates arrived without one."""
    page.evaluate("window.__noReload = 1")


def not_reloaded(page: Any) -> bool:
    return bool(page.evaluate("window.__noReload === 1"))
