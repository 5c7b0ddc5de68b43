"""Secrets kept out of every text a person or a file reads: one function, :func:`masked`.

A catalog is often named by a URL that holds a password, and that URL reaches messages,
plan files, lineage and logs. The password may sit in several places, and a URL with a
typo (a port that is not a number, a scheme no driver knows) cannot be parsed at all, so
the masking reads the text as text and never parses it: what looks like a secret is
replaced by ``***`` wherever it appears.

>>> masked("postgresql://me:pw@db:5432/iceberg")
'postgresql://me:***@db:5432/iceberg'
>>> masked("postgresql://me@db:5432/iceberg?sslmode=require&password=pw")
'postgresql://me@db:5432/iceberg?sslmode=require&password=***'
>>> masked("catalog('postgresql://me:pw@db:port/x') needs warehouse=")
"catalog('postgresql://me:***@db:port/x') needs warehouse="
>>> masked("https://rest.example/catalog?token=abc&warehouse=prod")
'https://rest.example/catalog?token=***&warehouse=prod'
>>> masked("host=db user=me password=pw dbname=x")  # libpq's keyword form
'host=db user=me password=*** dbname=x'
>>> masked("/data/lakehouse"), masked("expected KEY=VALUE")
('/data/lakehouse', 'expected KEY=VALUE')
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MASK", "masked", "secret_name"]

#: what a secret is shown as (``toolkit apply`` knows a catalog holding it lost its password)
MASK: Final = "***"

# A URL's user information: ``scheme://user:password@host``. The password runs to the
# last ``@`` before the query (``?``, ``#``) that a host follows (no further ``@`` up to
# ``/ ? #``, whitespace or the end), so a raw ``@`` or ``/`` inside a password (a URL that
# does not parse) is masked with the rest of it while an ``@`` in the query is not taken
# for it; failing that (a raw ``?`` or ``#`` in the password), to the first such ``@``.
_USERINFO: Final = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:@/?#\s]*):(?P<secret>[^\s?#]*|\S*?)"
    r"@(?=[^@/?#\s]*(?:[/?#\s]|$))"
)

# ``name=value`` anywhere (a URL's query, libpq's ``key=value`` form, JDBC's ``;name=``,
# an environment line): the value of a name that says it is a secret. It runs to the next
# separator of those forms: ``&``, ``;``, whitespace, a quote or a closing bracket.
_PARAMETER: Final = re.compile(
    r"(?P<name>[A-Za-z0-9_.\-]+)(?P<eq>=)(?P<secret>[^&;\s'\")\]}]*)"
)

# names that hold secrets: these words inside a name (``sslpassword``, ``clientSecret``,
# ``X-Amz-Security-Token``, ``s3.secret-access-key``), and short ones only as a whole part
# of it (``pwd``, ``pass``, ``sig``, ``auth``: not ``bypass`` or ``signal``)
_SECRET_WORDS: Final = re.compile(
    r"passw(?:or)?d|secret|token|credential|signature|api[_.\-]?key|private[_.\-]?key|"
    r"access[_.\-]?key|session[_.\-]?key",
    re.IGNORECASE,
)
_SECRET_PARTS: Final = frozenset({"pwd", "pass", "sig", "auth", "apikey"})
_NAME_PARTS: Final = re.compile(r"[_.\-]")


def secret_name(name: str) -> bool:
    """Whether a parameter called ``name`` holds a secret (a password, a token, a key).

    >>> [n for n in ("password", "sslpassword", "PWD", "X-Amz-Credential", "key",
    ...              "s3.secret-access-key", "bypass", "user", "host", "KEY_NAME")
    ...  if secret_name(n)]
    ['password', 'sslpassword', 'PWD', 'X-Amz-Credential', 's3.secret-access-key']
    """
    if _SECRET_WORDS.search(name):
        return True
    parts = [p.lower() for p in _NAME_PARTS.split(name) if p]
    # a whole name that is a short word, or a short word ending a compound name
    # (``x-api-key`` is caught above; ``KEY_NAME`` names a key, it does not hold one)
    return bool(parts) and parts[-1] in _SECRET_PARTS


def masked(text: str) -> str:
    """``text`` with every secret it holds shown as ``***``: a URL's password
    (``scheme://user:pw@host``) and the value of every parameter whose name says it is a
    secret (``password=``, ``pwd=``, ``token=``, ``secret=``, ``sslpassword=``, ``api_key=``
    ...), in a URL's query or anywhere else. Pure and never failing: the text is not parsed,
    so a URL that does not parse is masked too, and a text holding several is masked
    throughout. Everything else is kept as it was.

    >>> masked("foo://u:p@ss/w0rd@10.0.0.1:5432/db")  # raw '@' and '/': no parser takes it
    'foo://u:***@10.0.0.1:5432/db'
    >>> masked("postgresql://u@127.0.0.1:notaport/db?password=p%40ss;x")
    'postgresql://u@127.0.0.1:notaport/db?password=***;x'
    >>> masked("jdbc:sqlserver://h;user=u;password=pw;db=x")
    'jdbc:sqlserver://h;user=u;password=***;db=x'
    >>> masked(masked("postgresql://me:pw@db/x")) == masked("postgresql://me:pw@db/x")
    True
    """
    out = _USERINFO.sub(lambda m: f"{m['head']}:{MASK}@", text)

    def parameter(m: re.Match[str]) -> str:
        if not secret_name(m["name"]) or not m["secret"]:
            return m[0]
        return f"{m['name']}{m['eq']}{MASK}"

    return _PARAMETER.sub(parameter, out)
