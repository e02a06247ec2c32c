"""Common password shapes and what of each must never be stored, shared by the tests.

Each shape pairs a text with the pieces of its secret: the whole value is redacted, so no
piece (the tail after a ";" or "&" included) may survive. Keys are assembled at runtime.
"""

from __future__ import annotations

import random

_rng = random.Random(20261206)
_HEX = "0123456789abcdef"


def _hex(n: int) -> str:
    return "".join(_rng.choice(_HEX) for _ in range(n))


BILLING_HEX = _hex(40)
BARE_HEX = _hex(40)

# (text, pieces of the secret that must not survive)
SHAPES: list[tuple[str, tuple[str, ...]]] = [
    ("password=p@ss;w0rd#tail", ("p@ss", "w0rd#tail")),
    ("password=Tr0ub4dor&3xyz", ("Tr0ub4dor", "3xyz")),
    ("pwd=Qw3rty;uiop", ("Qw3rty", "uiop")),
    ('password = "hunter2 hunter2"', ("hunter2",)),
    ("mysql -pS3cr3tP4ss", ("S3cr3tP4ss",)),
    ("mysqldump -u root -pDump3rPw9 shop", ("Dump3rPw9",)),
    ("--password Xy9kL2qR7", ("Xy9kL2qR7",)),
    ("deploy --password=Pr0dPw9x now", ("Pr0dPw9x",)),
    ("secret=abc(def)ghi123", ("abc(def)", "ghi123")),
    ("BILLING_KEY=sk-live-" + BILLING_HEX, (BILLING_HEX,)),
    ("sk-" + BARE_HEX, (BARE_HEX,)),
    ("PGPASSWORD=Pg9passw0rd psql -h db", ("Pg9passw0rd",)),
    ("redis-cli -a R3dis!pw9 ping", ("R3dis!pw9",)),
    ("sshpass -p S5hpass9 ssh deploy@host", ("S5hpass9",)),
    ("curl -u bob:Hunt3r22x https://api.example.com", ("Hunt3r22x",)),
    ("docker login -u me -p D0ckerPw9 registry.example.com", ("D0ckerPw9",)),
]

# "-p" as a port or a parent flag, and the key after a password in a query: kept as typed.
KEPT = [
    "ssh -p 2222 deploy@host",
    "docker run -p 8080:80 nginx",
    "mkdir -p /srv/app/logs",
    "kubectl port-forward -p 5432",
    "password = getpass()",
]


def leaked(text: str) -> list[str]:
    """The secret pieces of every shape that ``text`` still holds."""
    return [piece for _shape, pieces in SHAPES for piece in pieces if piece in text]
