"""Structured credentials: key = value assignments, auth and cookie headers, URI userinfo,
command-line passwords.

No vendor prefix: the context (a key named like a password, an ``Authorization: Basic``
or ``Cookie`` header, URI userinfo, a password flag) plus a value that reads as a
literal secret, not code, makes them secrets. The bias is toward leaving prose and code
alone: ``password = getpass()``, ``api_key = os.environ["X"]``, ``secret: ${{
secrets.X }}``, ``password: str`` and "the password is stored hashed" are kept. The
finders (:mod:`transcripts.core.redaction.finders`) apply the predicates here.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

IGNORE_ASCII_CASE = re.IGNORECASE | re.ASCII

# ── Key = value assignments (the "assign" finder) ─────────────────────────────
# A key ends with one of the keywords (``DB_PASSWORD``, ``dbPassword``, ``client_secret``,
# ``X-Api-Key``), optionally closed by a quote (JSON, dict literals; an escaped quote
# inside a JSON string), then ``=``, ``:``, ``:=`` or ``=>``. The finder reads the value.
SEP = r"""(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*"""
# Words that make "…key" a secret's name (``api_key``, ``X-Api-Key``, ``SECRET_KEY``).
_KEY_OWNERS: tuple[str, ...] = (
    *("api", "access", "private", "secret", "encryption"),
    *("signing", "master", "client", "app", "license"),
)
KEY_PREFIXES: Final = tuple(w + sep for w in _KEY_OWNERS for sep in ("", "_", "-"))
# kind -> its keywords, each a regex that starts with a literal (so the engine's search
# on the lowercased text skips ahead in C), with the words that must precede it (None:
# any). ``pass`` and ``pwd`` alone need a non-alphanumeric before them ("bypass=").
ASSIGN_KEY_PARTS: Final[dict[str, tuple[tuple[str, tuple[str, ...] | None], ...]]] = {
    "password_assignment": (
        (r"pass(?:word|wd|phrase)", None),
        (r"pass(?<![a-z0-9]pass)", None),
        (r"pwd(?<![a-z0-9]pwd)", None),
    ),
    "secret_assignment": ((r"secret", None), (r"key", KEY_PREFIXES)),
    "token_assignment": ((r"token", None),),
}
# The same language as one case-insensitive regex per kind: the rule's pattern, for
# readers and tests. The engine runs the parts above on the ASCII-lowercased text.
ASSIGN_KEYS: Final = {
    "password_assignment": r"(?:pass(?:word|wd|phrase)|(?<![a-z0-9])(?:pass|pwd))",
    "secret_assignment": rf"(?:secret|(?:{'|'.join(_KEY_OWNERS)})[_-]?key)",
    "token_assignment": r"token",
}
ASSIGN_KEY_RES: Final = {
    kind: tuple((re.compile(part + SEP), owners) for part, owners in parts)
    for kind, parts in ASSIGN_KEY_PARTS.items()
}
# The shortest value each kind accepts. Passwords are short; a token is not, and
# tokenizer code (``token = "Hello,"``, ``pad_token = "<pad>"``) is common here.
ASSIGN_MIN_LEN: Final = {"password_assignment": 6, "secret_assignment": 8, "token_assignment": 12}
ASSIGN_ANCHORS: Final = {
    "password_assignment": ("pass", "pwd"),
    "secret_assignment": ("secret", "key"),
    "token_assignment": ("token",),
}

# Value scanners, run at the value start. Quoted: up to the closing quote, never across
# whitespace or a backslash (the value would be prose or an escape). Unquoted: up to
# whitespace, a quote, a delimiter of code, JSON, shell or a URL query, or "=" (which
# separates the next assignment; base64 padding is taken back by the finder).
QUOTED_VALUE_RE: Final = {q: re.compile(rf"[^{q}\s\\]*+") for q in "\"'`"}
# A password is also a passphrase: quoted, it may hold blanks ("hunter2 hunter2"), up to
# PASSPHRASE_MAX_WORDS words (a longer quoted text is a UI string or prose).
QUOTED_PASSPHRASE_RE: Final = {q: re.compile(rf"[^{q}\n\\]{{0,80}}+") for q in "\"'`"}
PASSPHRASE_MAX_WORDS: Final = 4
# A ";" or "&" inside the value ("p@ss;w0rd#tail", "Tr0ub4dor&3xyz") is part of it unless
# the next key starts there ("pw=abc123&user=bob"); so is a "(…)" with more value after it
# ("abc(def)ghi123"), while "getpass()" (nothing after) stays a call. Each character is
# read once: the look-aheads read one word, which the loop then consumes.
_VALUE_CHARS = r"""[^\s"'`=,;&()\[\]{}<>\\]"""
UNQUOTED_VALUE_RE: Final = re.compile(
    rf"""(?:{_VALUE_CHARS}++|[;&](?![A-Za-z_][\w.-]*+=)(?={_VALUE_CHARS})"""
    rf"""|\([^\s()"'`]*+\)(?={_VALUE_CHARS}))++={{0,2}}+"""
)
# String-literal prefixes (b"…", r'…'); f-strings are interpolated, so never a literal.
STRING_PREFIXES: Final = frozenset({"b", "r", "u", "br", "rb"})

_DOTTED_NAME = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLACEHOLDER_MARKERS = ("...", "\u2026", "xxxx", "****", "<", ">", "your_", "your-", "example")
_PLACEHOLDER_WORDS = frozenset({"changeme", "placeholder", "redacted", "password", "secret"})
_STRONG_SYMBOLS = frozenset("!@#$%^&*+=/?~|:;,\\")
_TEMPLATE_STARTS = tuple("${<[(*%")


def plausible_secret_value(value: str, *, quoted: bool, min_len: int) -> bool:
    """``value`` reads as a literal secret, not as code, a template or a placeholder.

    Rejected: shorter than ``min_len``; templates and references (``$X``, ``${…}``,
    ``{{ … }}``, ``<your-key>``, ``%(pw)s``, ``[…]``); masks and elisions (``****``,
    ``sk-...``); paths and URLs (a URL's userinfo has its own rule); YAML tags;
    fewer than 4 distinct characters. Unquoted, it must not be code: no dotted name
    (``args.password``), and a bare identifier (``password``, ``None``, ``SecretStr``)
    counts only if it has a digit, as env values do (``DB_PASSWORD=Sup3rS3cret``).
    Finally it needs a digit or a symbol other than ``_ - .``, or (quoted) 16+ mixed
    case letters: words and kebab-case placeholders are not secrets.
    """
    if len(value) < min_len or len(set(value)) < 4:
        return False
    # Trailing "=" is base64 padding (or the next key's "="), not evidence of a secret.
    value = value.rstrip("=") or value
    lowered = value.lower()
    if value.startswith(_TEMPLATE_STARTS) or value.endswith(("}", ">")):
        return False
    if not quoted and value.startswith("#"):  # a YAML or shell comment
        return False
    if value.startswith("!") and value.lstrip("!").isalpha():  # a YAML tag: !vault
        return False
    if any(m in lowered for m in _PLACEHOLDER_MARKERS) or lowered in _PLACEHOLDER_WORDS:
        return False
    if value.startswith(("/", "~/", "./", "../")) or "://" in value:
        return False
    if len(value) > 2 and value[1] == ":" and value[2] in "\\/":  # C:\ or C:/
        return False
    has_digit = any(c.isdigit() for c in value)
    if not quoted:
        if _DOTTED_NAME.fullmatch(value):
            return False
        if _IDENTIFIER.fullmatch(value):
            return has_digit
    if has_digit or any(c in _STRONG_SYMBOLS for c in value):
        return True
    inner_upper = any(c.isupper() for c in value[1:])
    return quoted and len(value) >= 16 and inner_upper and any(c.islower() for c in value)


# ── Authorization: Basic (a validated rule) ─────────────────────────────────
def is_basic_credentials(header: str) -> bool:
    """The header's value is base64 of ``user:password`` (RFC 7617).

    Prose such as "Authorization: Basic followed by…" matches the pattern, but
    "followed" does not decode to text with a colon.
    """
    value = header.rsplit(None, 1)[-1].lstrip("\"'")
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in raw and len(raw) >= 3


# ── Cookie and Set-Cookie headers (the "cookie" finder) ───────────────────────
COOKIE_KEY_RE: Final = re.compile(
    r"""(?:set-)?cookie(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?|--cookie[ \t=]+["']?""",
    IGNORE_ASCII_CASE,
)
# The cookie list: ``name=value`` pairs joined by "; ". It stops at whitespace that does
# not follow a ";", a quote or a backslash (an escaped newline inside a JSON string), so
# prose after an inline header is kept. A Set-Cookie's secret is its first pair only
# (the rest are attributes: Path, Expires, HttpOnly).
# A cookie name is an RFC 6265 token: no ":" and no other separator, so "cookie:cookie:"
# fails at once instead of scanning on for an "=".
_COOKIE_PAIR = r"""[^\s=;:,"'\\()<>@\[\]{}/?]++=[^\s;"'\\]*+"""
# The finder matches these right after the header (a quote, ":", "=" or a blank), so the
# look-behind changes nothing there; it only keeps a search from re-reading a name run.
_COOKIE_START = r"""(?<![^\s=;:,"'\\()<>@\[\]{}/?])"""
COOKIE_LIST_RE: Final = re.compile(rf"{_COOKIE_START}{_COOKIE_PAIR}(?:;[ \t]*{_COOKIE_PAIR})*+")
SET_COOKIE_PAIR_RE: Final = re.compile(_COOKIE_START + _COOKIE_PAIR)
_COOKIE_RUN = re.compile(r"[A-Za-z0-9%+/._~-]{8,}")


def looks_like_session_cookie(pairs: str) -> bool:
    """A ``name=value`` list with a session-id-like run: 8+ chars with a digit, or 20+.

    ``theme=dark; lang=en`` and prose ("the Cookie: header") are kept.
    """
    if "=" not in pairs:
        return False
    for m in _COOKIE_RUN.finditer(pairs):
        run = m.group()
        if len(run) >= 20 or any(c.isdigit() for c in run):
            return True
    return False


# ── URI userinfo for any scheme (the "anyscheme" finder) ──────────────────────
# From "://": the same tail as the scheme-list rules. The finder walks back over the
# scheme (RFC 3986: a letter, then letters, digits, "+", "-", "."); schemes are
# case-insensitive, so ``Postgres://`` counts.
ANY_SCHEME_TAIL_RE: Final = re.compile(r"://[^\s:/@]*:[^\s/@]+@")
SCHEME_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")
_TEMPLATE_PASSWORDS = frozenset({"password", "pass", "pwd", "secret", "token", "passwd"})


def plausible_userinfo_password(password: str) -> bool:
    """Not a template (``{password}``, ``$PW``, ``%s``, ``<pw>``) or a docs word."""
    if password.startswith(tuple("{$%<*[")) or password.endswith(("}", ">")):
        return False
    return password.lower() not in _TEMPLATE_PASSWORDS and len(set(password)) > 1


# ── Passwords given to a command line (the "cli" finder) ──────────────────────
# Flags that take a password, per program. "-p" is a password only for these programs
# (``ssh -p 22``, ``docker run -p 8080:80`` and ``mkdir -p`` are ports and parents); for
# docker-like tools only in a ``login``. Attached: ``mysql -pS3cret``; separate:
# ``sshpass -p S3cret``. ``--password``/``--passwd`` (``=`` or a blank) count for any
# program. curl's ``-u user:pass`` is redacted after the first ":".
_DOCKER_LIKE = ("docker", "podman", "nerdctl", "buildah", "skopeo", "helm")
CLI_ATTACHED: Final[dict[str, tuple[str, ...]]] = {
    **dict.fromkeys(("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mariadb"), ("-p",)),
    **dict.fromkeys(("mariadb-dump", "mysqlsh", "sshpass"), ("-p",)),
    "redis-cli": ("-a",),
    **dict.fromkeys(_DOCKER_LIKE, ("-p",)),
    "curl": ("-u",),
}
CLI_SEPARATE: Final[dict[str, tuple[str, ...]]] = {
    "sshpass": ("-p",),
    "redis-cli": ("-a", "--pass"),
    **dict.fromkeys(_DOCKER_LIKE, ("-p",)),
    "curl": ("-u", "--user"),
}
CLI_LOGIN_ONLY: Final = frozenset(_DOCKER_LIKE)
CLI_USERINFO: Final = frozenset({"curl"})
CLI_LONG_FLAGS: Final = ("--password", "--passwd")
# A command ends at a newline or a shell operator; its words are runs of non-blanks. Only
# a command that names one of the programs (or a long password flag) is read word by word:
# one C-speed search finds them ("passed" in test output, which gates the rule, is not one).
CLI_COMMAND_END: Final = "\n|;&"
_CLI_NAMES = sorted({*CLI_ATTACHED, *CLI_SEPARATE}, key=len, reverse=True)
CLI_TRIGGER_RE: Final = re.compile(
    # (no look-behind first: it would be tried at every position; the finder checks it)
    r"(?:" + "|".join(re.escape(n) for n in _CLI_NAMES) + r"|--passw(?:or)?d)(?![\w-])"
)
CLI_WORD_RE: Final = re.compile(r"\S++")
# Quotes around a word (a command quoted in prose, JSON's escaped quotes) are not part of it.
CLI_QUOTES: Final = "\"'`\\()"
# (each anchor holds a fast-path literal the prefilter knows: "--pass" holds "pass", so a row
# with only "passed" in it never opens the rule)
CLI_ANCHORS: Final = ("mysql", "mariadb", "sshpass", "redis-cli", "login", "curl", "--pass")
