"""One function masks secrets in every form a URL a user gives can take: a password after
the user, a password (or token, secret, key) among the query parameters, libpq's and
JDBC's key=value forms, and URLs that no parser takes (a port that is not a number, a
scheme no driver knows, raw '@' and '/' in a password). Everything else stays readable."""

from __future__ import annotations

import string
from urllib.parse import quote

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from toolkit.core.values.secrets import masked

CASES = [
    ("postgresql://me:PW@db:5432/iceberg", "postgresql://me:***@db:5432/iceberg"),
    ("postgresql://me@db:5432/iceberg?password=PW", "postgresql://me@db:5432/iceberg?password=***"),
    ("postgresql://db/x?user=me&pwd=PW&sslmode=require",
     "postgresql://db/x?user=me&pwd=***&sslmode=require"),
    ("https://rest.example/v1?token=PW&warehouse=w", "https://rest.example/v1?token=***&warehouse=w"),
    ("https://rest.example/v1?client_secret=PW", "https://rest.example/v1?client_secret=***"),
    ("s3://bucket/x?X-Amz-Credential=PW&X-Amz-Signature=PW",
     "s3://bucket/x?X-Amz-Credential=***&X-Amz-Signature=***"),
    ("postgresql://me:PW@127.0.0.1:notaport/db", "postgresql://me:***@127.0.0.1:notaport/db"),
    ("postgresql://me@127.0.0.1:notaport/db?password=PW",
     "postgresql://me@127.0.0.1:notaport/db?password=***"),
    ("foo+bar://me:PW@host/db", "foo+bar://me:***@host/db"),
    ("postgresql://me:P@W/x@host:5432/db", "postgresql://me:***@host:5432/db"),
    ("postgresql://me:P?W@host/db", "postgresql://me:***@host/db"),
    ("postgresql://:PW@host/db", "postgresql://:***@host/db"),
    ("jdbc:sqlserver://h;user=me;password=PW;db=x", "jdbc:sqlserver://h;user=me;password=***;db=x"),
    ("host=db user=me password=PW dbname=x", "host=db user=me password=*** dbname=x"),
    ("catalog('postgresql://me:PW@db/x') needs warehouse=",
     "catalog('postgresql://me:***@db/x') needs warehouse="),
    ("two: a://u:PW@h/x and b://v:PW@k/y?sslpassword=PW",
     "two: a://u:***@h/x and b://v:***@k/y?sslpassword=***"),
]
KEPT = [
    "/data/lakehouse", "sqlite:////tmp/lake/catalog.db", "postgresql://me@db:5432/iceberg",
    "postgresql://db:5432/iceberg?sslmode=require", "https://rest.example/v1/catalog",
    "expected KEY=VALUE", "prod", "file:///data/warehouse", "--conf spark.master=local[2]",
]


@pytest.mark.parametrize(("text", "shown"), CASES, ids=[c[0] for c in CASES])
def test_every_form_of_a_secret_is_masked(text: str, shown: str) -> None:
    assert masked(text) == shown
    assert "PW" not in masked(text) and "P@W" not in masked(text)
    assert masked(shown) == shown  # masking twice changes nothing


@pytest.mark.parametrize("text", KEPT)
def test_a_text_without_secrets_is_kept_as_it_is(text: str) -> None:
    assert masked(text) == text


#: what a password may hold raw in a URL's user part (a URL that may not parse): anything
#: but whitespace and the '?' / '#' that start a query (those make the URL ambiguous)
RAW = string.ascii_letters + string.digits + "!$%&'()*+,;=@/:~-._"
FORMS = [
    "postgresql://u:{raw}@h:5432/db",
    "postgresql://u:{raw}@h:notaport/db?sslmode=require",
    "weird+scheme://u:{raw}@h/db",
    "postgresql://u@h:5432/db?password={quoted}",
    "postgresql://u@h:99999999/db?sslmode=require&password={quoted}&x=1",
    "https://h/catalog?token={quoted}",
]


@given(st.text(alphabet=RAW, min_size=8, max_size=24), st.sampled_from(FORMS))
def test_no_password_survives_masking(password: str, form: str) -> None:
    url = form.format(raw=password, quoted=quote(password, safe=""))
    shown = form.format(raw="", quoted="")
    assume(password not in shown and quote(password, safe="") not in shown)
    out = masked(url)
    assert password not in out and quote(password, safe="") not in out
    assert out.startswith(form.partition(":")[0])  # the rest stays readable
