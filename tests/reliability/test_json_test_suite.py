"""JSONTestSuite's parsing corpus (tests/data/json_test_suite: ``y_`` a JSON parser must
accept, ``n_`` refuse, ``i_`` either) through the toolkit's JSON-lines readers, as
nst/JSONTestSuite's ``run_tests.py`` runs a parser on each file of ``test_parsing/``
(``parsers/test_simplejson.py``: exit 0 accepted, 1 refused, anything else a crash). Here
the promise is the one of docs/rules.md, "Bytes from other systems": each line lands
exactly (a JSON object: a record, values as ``json.loads`` reads them, numbers exact or
kept as their literal's text) or is set aside with its raw bytes and a reason naming the
line; never a crash, never a line lost, and Spark (the JVM tally and router, and the
Python workers) says what ``toolkit.simulate`` says. What this corpus found, and what we
do otherwise on purpose (:data:`DELIBERATE`), is below.

Of the 318 documents (the 316 files and the two the README says how to make), 313 are
one line each of one JSON-lines file: those whose bytes hold no line break but a final
one, which ends the line as in any JSON-lines file. Five hold a line break inside
(``n_array_newlines_unclosed``, ``n_array_unclosed_with_new_lines``,
``n_string_unescaped_newline``, ``y_array_with_1_and_newline``, ``y_object_with_newlines``):
they cannot be one line, so each is read as a file of its own, line by line, as Spark's
text reader splits it.

Every document is also read as a record's value (``{"v": <document>}``), where its
numbers and texts land and must equal ``json.loads``'s.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.types import NestedField

import toolkit
from tests.integration.readers import canonical, read_spark
from toolkit.core.batch.quarantine import Quarantined, QuarantinedRow
from toolkit.core.values.jsonlines import UnreadLine, read_lines
from toolkit.spark import router, tally

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SUITE = Path(__file__).parents[1] / "data" / "json_test_suite"
#: the two documents not copied (tests/data/json_test_suite/README.md): a bracket repeated
MADE = {
    "n_structure_100000_opening_arrays.json": b"[" * 100_000,
    "n_structure_open_array_object.json": b'[{"":' * 50_000 + b"\n",
}
DOCUMENTS = dict(sorted(({p.name: p.read_bytes() for p in SUITE.glob("*.json")} | MADE).items()))


def as_line(document: bytes) -> bytes | None:
    """The line a document makes (its final line break ends the line), or None when a
    line break sits inside it."""
    body = document.removesuffix(b"\n")
    return None if b"\n" in body or b"\r" in body else body


LINES = {name: line for name, d in DOCUMENTS.items() if (line := as_line(d)) is not None}
NUMBERS = {name: number for number, name in enumerate(LINES, 1)}
SPLIT = [name for name in DOCUMENTS if name not in LINES]

#: What we do otherwise than the corpus asks, on purpose: (what becomes of the line, of
#: the document as a record's value, and the section of docs/rules.md that decides it).
DELIBERATE: dict[str, tuple[str, str, str]] = {
    **dict.fromkeys(
        ["y_object_duplicated_key.json", "y_object_duplicated_key_and_value.json"],
        ("duplicate-key", "duplicate-key",
         "Bytes from other systems: a key named twice sets its record aside whole; no value "
         "is taken over the other"),
    ),
    "y_object_empty_key.json": (
        "record", "record",
        "Hostile input: an empty key names no column; its value lands in `_2`, whose doc "
        "keeps the key"),
    **dict.fromkeys(
        ["n_number_NaN.json", "n_number_infinity.json", "n_number_minus_infinity.json"],
        ("not-a-record", "record",
         "Types and values, Bytes from other systems: NaN, Infinity and -Infinity are "
         "doubles (Python's json and Spark's JSON reader take them too)"),
    ),
    **dict.fromkeys(
        ["y_array_with_1_and_newline.json", "y_object_with_newlines.json"],
        ("lines", "lines",
         "Bytes from other systems: a JSON-lines file holds a document per line, and lines "
         "end as Spark's text reader ends them; each piece is set aside as malformed"),
    ),
}

#: What we do with each document JSONTestSuite leaves to the parser: (its line, it as a
#: record's value). A change shows up here.
IMPLEMENTATION_DEFINED: dict[str, tuple[str, str]] = {
    # beyond a double or 64 bits: kept as the literal's text (a double would be inf or 0.0)
    **dict.fromkeys(
        ["i_number_double_huge_neg_exp.json", "i_number_huge_exp.json",
         "i_number_neg_int_huge_exp.json", "i_number_pos_double_huge_exp.json",
         "i_number_real_neg_overflow.json", "i_number_real_pos_overflow.json",
         "i_number_real_underflow.json", "i_number_too_big_neg_int.json",
         "i_number_too_big_pos_int.json", "i_number_very_big_negative_int.json"],
        ("not-a-record", "record"),
    ),
    # a lone surrogate escape has no UTF-8 form: no Parquet file could store the text
    **dict.fromkeys(
        ["i_object_key_lone_2nd_surrogate.json", "i_string_1st_surrogate_but_2nd_missing.json",
         "i_string_1st_valid_surrogate_2nd_invalid.json",
         "i_string_incomplete_surrogate_and_escape_valid.json",
         "i_string_incomplete_surrogate_pair.json",
         "i_string_incomplete_surrogates_escape_valid.json",
         "i_string_invalid_lonely_surrogate.json", "i_string_invalid_surrogate.json",
         "i_string_inverted_surrogates_U+1D11E.json", "i_string_lone_second_surrogate.json"],
        ("malformed", "malformed"),
    ),
    **dict.fromkeys(
        ["i_string_UTF-16LE_with_BOM.json", "i_string_UTF-8_invalid_sequence.json",
         "i_string_UTF8_surrogate_U+D800.json", "i_string_invalid_utf-8.json",
         "i_string_iso_latin_1.json", "i_string_lone_utf8_continuation_byte.json",
         "i_string_not_in_unicode_range.json", "i_string_overlong_sequence_2_bytes.json",
         "i_string_overlong_sequence_6_bytes.json",
         "i_string_overlong_sequence_6_bytes_null.json", "i_string_truncated-utf-8.json",
         "i_string_utf16BE_no_BOM.json", "i_string_utf16LE_no_BOM.json"],
        ("not-utf8", "not-utf8"),
    ),
    # read (the engine then sets a record that deep aside: tests/reliability/test_hostile.py)
    "i_structure_500_nested_arrays.json": ("not-a-record", "record"),
    # a byte order mark inside a line is no JSON blank
    "i_structure_UTF-8_BOM_empty_object.json": ("malformed", "malformed"),
}

#: lines that hand their whole partition from the JVM tally and router to the Python
#: path (jvm/Tally.java, ``tallyRead``: a key named twice, a key with a lone surrogate)
HANDED_TO_PYTHON = ("i_object_key_lone_2nd_surrogate.json", "y_object_duplicated_key.json",
                    "y_object_duplicated_key_and_value.json")
#: how a column's doc names the key it holds (RULES 4)
EVOLVED_FROM = "upsolver_evolved_from:"
#: what a line set aside says first
NUMBERED = re.compile(r"line (\d+): ")


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def is_blank(line: bytes) -> bool:
    """A line of JSON blanks only (a line break ends a line: space and tab are left)."""
    return not line.strip(b" \t")


def raw_bytes(q: Quarantined | QuarantinedRow) -> bytes:
    """What a line set aside keeps of it: its bytes (not UTF-8), else its text's."""
    if isinstance(q, QuarantinedRow):
        return q.data if q.data is not None else q.raw.encode()
    return q.record if isinstance(q.record, bytes) else q.raw.encode()


def line_of(detail: str) -> int:
    found = NUMBERED.search(detail)
    assert found is not None, f"names no line: {detail!r}"
    return int(found[1])


def expected(name: str) -> str:
    """What becomes of a document's line: ``record``, ``blank``, a reason, ``set-aside``
    (an ``n_`` line: malformed or not UTF-8)."""
    if name in DELIBERATE:
        return DELIBERATE[name][0]
    if name.startswith("i_"):
        return IMPLEMENTATION_DEFINED[name][0]
    if name.startswith("n_"):
        return "blank" if is_blank(LINES[name]) else "set-aside"
    return "record" if isinstance(json.loads(LINES[name]), dict) else "not-a-record"


class Literal(str):
    """A JSON number with a fraction or an exponent, as written."""


def gives_back(double: float, literal: str) -> bool:
    """Whether ``double`` is the number ``literal`` writes."""
    if not math.isfinite(double):
        return False
    try:
        return Decimal(repr(double)) == Decimal(literal)
    except InvalidOperation:  # an exponent no Decimal holds: far beyond any double
        return False


def same(got: Any, want: Any) -> bool:
    """Whether ``got`` (what the toolkit read) is ``want`` (``json.loads``'s value, its
    numbers with a fraction or an exponent as written: :func:`parsed`). Such a number is
    its double when that double gives it back, else its literal's text (docs/rules.md).
    A loop, not a recursion: a document nests 500 levels deep."""
    stack = [(got, want)]
    while stack:
        g, w = stack.pop()
        if isinstance(w, Literal):
            ok = gives_back(g, w) if isinstance(g, float) else (
                g == w and not gives_back(float(w), w))
        elif isinstance(w, float):  # NaN and the infinities, which JSON has no word for
            ok = isinstance(g, float) and (g == w or math.isnan(g) and math.isnan(w))
        elif isinstance(w, dict):
            ok = isinstance(g, dict) and all(g[k] is None for k in g.keys() - w.keys())
            stack += [(g.get(k), v) for k, v in w.items()] if ok else []
        elif isinstance(w, list):
            ok = isinstance(g, list) and len(g) == len(w)
            stack += zip(g, w, strict=True) if ok else []
        else:
            ok = type(g) is type(w) and g == w
        if not ok:
            return False
    return True


def key_of(field: NestedField) -> str:
    """The key a column holds: the one its doc names (RULES 4), else its name."""
    doc = field.doc or ""
    return doc.removeprefix(EVOLVED_FROM) if doc.startswith(EVOLVED_FROM) else field.name


def landed_row(row: dict[str, Any], keys: dict[str, str], want: dict[str, Any]) -> bool:
    """Whether a table row holds a record's values: each key's value in one column of its
    family (the columns whose doc names the key), the other columns empty."""
    for key, value in want.items():
        held = [row[c] for c, k in keys.items() if k == key and row[c] is not None]
        if value is None and held:
            return False
        if value is not None and (len(held) != 1 or not same(held[0], value)):
            return False
    return all(row[c] is None for c, k in keys.items() if k not in want)


def parsed(line: bytes) -> Any:
    return json.loads(line, parse_float=Literal)


# --- the pure path ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_lines(tmp_path_factory.mktemp("suite") / "corpus.jsonl", list(LINES.values()))


@pytest.fixture(scope="module")
def simulated(corpus: Path) -> toolkit.Simulation:
    return toolkit.simulate([corpus])


@pytest.fixture(scope="module")
def outcomes(simulated: toolkit.Simulation) -> dict[str, Quarantined | dict[str, Any] | None]:
    """Per document, what ``simulate`` made of its line: what it set aside, its row, or
    None (a blank line). Lines set aside name their number; rows come in line order."""
    aside = {line_of(q.detail): q for q in simulated.quarantined}
    rows = iter(simulated.rows)
    out: dict[str, Quarantined | dict[str, Any] | None] = {}
    for name, number in NUMBERS.items():
        out[name] = aside.get(number) or (None if is_blank(LINES[name]) else next(rows, None))
    return out


def test_nothing_is_lost_and_nothing_crashes(
    corpus: Path, simulated: toolkit.Simulation
) -> None:
    """Records + lines set aside + blank lines == lines, each line set aside once; the
    profile counts alike (it failed on a line that is JSON but no object, before)."""
    numbers = [line_of(q.detail) for q in simulated.quarantined]
    blank = sum(map(is_blank, LINES.values()))
    assert len(set(numbers)) == len(numbers), "a line set aside twice"
    assert len(simulated.rows) + len(numbers) + blank == len(LINES)
    assert not {n for name, n in NUMBERS.items() if is_blank(LINES[name])} & set(numbers)
    profiled = toolkit.profile(corpus)
    assert (profiled.records, profiled.lines_set_aside) == (len(simulated.rows), len(numbers))


def test_the_tables_name_documents_and_every_implementation_defined_one() -> None:
    assert set(DELIBERATE) | set(IMPLEMENTATION_DEFINED) <= set(DOCUMENTS)
    assert {n for n in DOCUMENTS if n.startswith("i_")} == set(IMPLEMENTATION_DEFINED)
    assert not {n for n in DELIBERATE if n.startswith("i_")}


@pytest.mark.parametrize("name", list(LINES))
def test_each_line_lands_exactly_or_is_set_aside_with_its_bytes_and_number(
    name: str, outcomes: dict[str, Any], simulated: toolkit.Simulation
) -> None:
    line, want, got = LINES[name], expected(name), outcomes[name]
    if want == "blank":
        assert got is None, f"{name}: a blank line, skipped: {got!r}"
        return
    assert got is not None, f"{name}: line {NUMBERS[name]} lost"
    if want == "record":
        assert isinstance(got, dict), f"{name}: set aside ({got.reason}: {got.detail})"
        keys = {f.name: key_of(f) for f in simulated.schema.fields}
        assert landed_row(got, keys, parsed(line)), f"{name}: {got!r} is not {line!r}"
        return
    assert isinstance(got, Quarantined), f"{name}: a record {got!r}"
    if want == "set-aside":
        assert got.reason in ("malformed", "not-utf8"), f"{name}: {got.reason}: {got.detail}"
    else:
        assert got.reason == want, f"{name}: {got.reason}, not {want}: {got.detail}"
    try:
        line.decode()
    except UnicodeDecodeError:
        assert got.reason == "not-utf8", f"{name}: not UTF-8, yet {got.reason}"
    assert raw_bytes(got) == line, f"{name}: kept {raw_bytes(got)[:80]!r}, not its line"
    assert got.detail.startswith(f"line {NUMBERS[name]}: "), f"{name}: {got.detail}"


@pytest.fixture(scope="module")
def as_values(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each document's line as a record's value, read by the JSON-lines reader."""
    path = write_lines(tmp_path_factory.mktemp("values") / "values.jsonl",
                       [b'{"v": ' + line + b"}" for line in LINES.values()])
    return dict(zip(LINES, read_lines(path), strict=True))


@pytest.mark.parametrize("name", list(LINES))
def test_each_document_as_a_value_equals_what_json_loads_reads(
    name: str, as_values: dict[str, Any]
) -> None:
    got = as_values[name]
    if name in DELIBERATE:
        want = DELIBERATE[name][1]
    elif name.startswith("i_"):
        want = IMPLEMENTATION_DEFINED[name][1]
    else:
        want = "record" if name.startswith("y_") else "set-aside"
    if want != "record":
        assert isinstance(got, UnreadLine), f"{name}: read as {got!r}"
        assert want == "set-aside" or got.error.reason_key == want, f"{name}: {got.error}"
        return
    assert not isinstance(got, UnreadLine), f"{name}: set aside: {got.error}"
    assert same(got["v"], parsed(LINES[name])), f"{name}: {got['v']!r} from {LINES[name]!r}"


def test_a_document_with_line_breaks_is_read_line_by_line(tmp_path: Path) -> None:
    """Each piece of a document across lines is set aside (a line, none a record) with
    its bytes and its number; nothing is lost."""
    paths = []
    for name in SPLIT:
        (path := tmp_path / f"{name}l").write_bytes(DOCUMENTS[name])
        paths.append(path)
    sim = toolkit.simulate(paths)
    assert sim.rows == [], "a piece of a document read as a record"
    for index, name in enumerate(SPLIT):
        if name.startswith("y_"):
            assert DELIBERATE[name][0] == "lines", name
        pieces = DOCUMENTS[name].splitlines()
        aside = {line_of(q.detail): q for q in sim.quarantined if q.batch == index}
        for number, piece in enumerate(pieces, 1):
            if is_blank(piece):
                assert number not in aside, f"{name}: blank line {number} set aside"
                continue
            assert number in aside, f"{name}: line {number} {piece!r} lost"
            assert raw_bytes(aside[number]) == piece, f"{name}: line {number}"
        assert len(aside) == sum(not is_blank(p) for p in pieces), name


# --- Spark -------------------------------------------------------------------------------


def quarantined_lines(
    lakehouse: Catalog, table: str, path: Path
) -> Counter[tuple[str, str | None, str | None, bytes, str]]:
    """The quarantine rows of the batch of ``path``: reason, field, observed type, bytes,
    and the detail without the file and the line (which only the JVM router names: the
    Python workers cannot see where a line sat in its file)."""
    rows = [r for r in toolkit.quarantine(lakehouse, table).rows if r.batch_id == path.stem]
    for r in rows:  # read back, a line that is JSON but no object is the value it writes
        if r.reason == "not-a-record":
            assert type(r.record).__name__ == r.observed, f"{r.observed}: {r.raw[:80]!r}"
    return Counter(
        (r.reason, r.field, r.observed, raw_bytes(r),
         NUMBERED.sub("", r.detail.removeprefix(f"{path.as_uri()}: "), 1))
        for r in rows)


def simulated_lines(items: list[Quarantined]) -> Counter[Any]:
    return Counter((q.reason, q.field, q.observed, raw_bytes(q), NUMBERED.sub("", q.detail, 1))
                   for q in items)


def named(items: Counter[Any]) -> list[str]:
    """The documents whose lines ``items`` (quarantine rows, as above) hold."""
    by_line = {line: name for name, line in LINES.items()}
    return sorted({by_line.get(item[3], repr(item[3][:60])) for item in items})


@pytest.mark.spark
@pytest.mark.parametrize("route", ["new-table", "jvm-one-pass", "python-workers"])
def test_ingest_writes_and_sets_aside_what_simulate_does(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path, route: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The corpus lands on Spark as ``simulate`` says: its rows, and its quarantine line
    for line (reason, field, bytes, detail). ``new-table``: the JVM tally hands the
    partition to the Python workers (it holds lines that are no records); ``jvm-one-pass``:
    into a table its records made, without the lines that hand a partition to Python
    (blank in their place, so each line keeps its number), the JVM router sets each line
    aside itself and names it (file and number); ``python-workers``: a session without
    the JVM helpers (``toolkit.spark.tally``: the Python path, exact)."""
    table = f"json_test_suite.{route.replace('-', '_')}"
    corpus = write_lines(tmp_path / "corpus.jsonl", list(LINES.values()))
    batches = [corpus]
    if route == "python-workers":
        for module in (tally, router):
            monkeypatch.setattr(module, "jvm_class", lambda spark, name: None)
    if route == "jvm-one-pass":
        records = [line for line, is_record in zip(LINES.values(), _records_of(corpus),
                                                    strict=True) if is_record]
        blanked = [b"" if name in HANDED_TO_PYTHON else line for name, line in LINES.items()]
        batches = [write_lines(tmp_path / "records.jsonl", records),
                   write_lines(tmp_path / "one_pass.jsonl", blanked)]
    sim = toolkit.simulate(batches)
    reports = [toolkit.ingest(str(p), table=table, catalog=lakehouse, spark=spark,
                              batch_id=p.stem) for p in batches]
    last = reports[-1]
    assert read_spark(spark, f"{lakehouse.name}.{table}") == canonical(sim.rows), route
    assert last.quarantined == sum(q.batch == len(batches) - 1 for q in sim.quarantined)
    mine = [q for q in sim.quarantined if q.batch == len(batches) - 1]
    stored, said = quarantined_lines(lakehouse, table, batches[-1]), simulated_lines(mine)
    assert stored == said, (
        f"{route}: Spark alone set aside {named(stored - said)}, simulate alone "
        f"{named(said - stored)}")
    if route == "python-workers":
        assert last.routed_in == "python"
    if route == "jvm-one-pass":
        assert (last.one_pass, last.routed_in) == (True, "jvm")
        by_line = {line_of(q.detail): q.detail for q in mine}
        names = {number: name for name, number in NUMBERS.items()}
        for r in toolkit.quarantine(lakehouse, table).rows:
            if r.batch_id == batches[-1].stem:
                number = line_of(r.detail)
                assert r.detail == f"{batches[-1].as_uri()}: {by_line[number]}", \
                    f"{names[number]}: {r.detail}"


def _records_of(path: Path) -> list[bool]:
    """Per line of a JSON-lines file, whether ``simulate`` makes it a record."""
    sim = toolkit.simulate([path])
    aside = {line_of(q.detail) for q in sim.quarantined}
    lines = path.read_bytes().split(b"\n")[:-1]
    return [n not in aside and not is_blank(line) for n, line in enumerate(lines, 1)]
