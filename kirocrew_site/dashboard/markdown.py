"""Transcript and summary text as safe HTML: Markdown rendered on the server, then sanitized.

markdown-it-py renders with raw HTML off; nh3 (an allow-list) then cleans, so a parser bug
still cannot put a script on the page. Redaction markers become ``<mark>`` on text tokens
only, so they are never looked for inside code or produced from raw input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from html import escape
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

REDACTED = re.compile(r"\[REDACTED: [^\]\n]{1,200}\]")
LONG_CODE_LINES = 15  # longer code blocks start collapsed behind a <details>
MAX_CHARS = 200_000  # beyond this a row is shown as plain text (rendering cost is linear)

TAGS = {
    "p", "br", "hr", "strong", "em", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "mark", "details", "summary", "span",
}  # fmt: skip
ATTRIBUTES = {
    "a": {"href", "title"},
    "code": {"class"},
    "mark": {"class"},
    "details": {"class"},
    "span": {"class"},
    "ol": {"start"},
}
URL_SCHEMES = {"http", "https", "mailto"}


def _redactions(state: StateCore) -> None:
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        for token in block.children:
            if token.type != "text" or "[REDACTED: " not in token.content:
                children.append(token)
                continue
            last = 0
            for match in REDACTED.finditer(token.content):
                if match.start() > last:
                    children.append(_text(token.content[last : match.start()]))
                marker = Token("redacted", "mark", 0)
                marker.content = match.group(0)
                children.append(marker)
                last = match.end()
            if last < len(token.content):
                children.append(_text(token.content[last:]))
        block.children = children


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _render_redacted(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return f'<mark class="redacted">{escape(tokens[idx].content)}</mark>'


def _long_code(html: str, lines: int, end: str = "") -> str:
    if lines <= LONG_CODE_LINES:
        return html
    return f'<details class="code-long"><summary>Code, {lines} lines</summary>{html}</details>{end}'


def _collapsible(default: Any) -> Any:
    def render(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        html = str(default(tokens, idx, options, env))
        return _long_code(html, tokens[idx].content.count("\n"), "\n")

    return render


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable(
        ["table", "strikethrough"]
    )
    md.core.ruler.push("redactions", _redactions)
    md.add_render_rule("redacted", _render_redacted)
    for kind in ("fence", "code_block"):
        md.add_render_rule(kind, _collapsible(getattr(md.renderer, "rules")[kind]))  # noqa: B009
    return md


def _clean(html: str) -> str:
    return nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


def render_block(text: str) -> str:
    if len(text) > MAX_CHARS:
        return _clean(f"<pre>{escape(text)}</pre>")
    return _clean(_parser().render(text))


def render_code(text: str) -> str:
    return _clean(_long_code(f"<pre><code>{escape(text)}</code></pre>", text.count("\n") + 1))


def render_inline(text: str) -> str:
    if len(text) > MAX_CHARS:
        return escape(text)
    return _clean(_parser().renderInline(text))
