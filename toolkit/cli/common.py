"""What the commands share: their common options, opening the catalog, starting a quiet
Spark session, and printing results as text or JSON. (The progress line on a terminal,
:func:`status` among it, lives in :mod:`toolkit.cli.progress`.)"""

from __future__ import annotations

import datetime as dt
import glob
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from toolkit.cli.progress import status
from toolkit.cli.terminal import echo
from toolkit.core.batch.contracts import Contracts
from toolkit.core.batch.hints import parse_hints
from toolkit.core.batch.options import (
    RARE_TYPE_PERCENT_MAX,
    checked_rare_type_percent,
    make_options,
)
from toolkit.core.evolution.planfile import PlanFile, loads
from toolkit.core.policies import DEFAULT_POLICY, POLICIES, policy_names
from toolkit.core.values.secrets import MASK, masked
from toolkit.errors import HintError

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table
    from pyspark.sql import SparkSession

__all__ = [
    "DURATION",
    "CatalogChoice",
    "Duration",
    "duration_text",
    "catalog_options",
    "check_source",
    "emit",
    "evolution_options",
    "evolution_settings",
    "existing_table",
    "json_option",
    "open_catalog",
    "policy_options",
    "read_plan_file",
    "recorded_catalog",
    "spark_options",
    "start_spark",
    "status",
    "table_argument",
]

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_CATALOG = "lakehouse"


def json_option(f: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True,
        help="Print the result as one JSON object on standard output (errors too).",
    )(f)


def catalog_options(default: str | None = DEFAULT_CATALOG) -> Callable[[F], F]:
    """``--catalog`` and ``--warehouse`` (also from ``TOOLKIT_CATALOG`` and
    ``TOOLKIT_WAREHOUSE``)."""
    shown = f" [default: {default}]" if default else " [default: the plan file's]"

    def add(f: F) -> F:
        f = click.option(
            "--warehouse", envvar="TOOLKIT_WAREHOUSE", metavar="LOCATION",
            help="Where the tables' files go, for a catalog URL (a folder, s3://...).",
        )(f)
        return click.option(
            "--catalog", "catalog_spec", envvar="TOOLKIT_CATALOG", metavar="FOLDER|URL|NAME",
            default=default,
            help="The catalog: a folder (the embedded SQLite catalog kept there), a URL "
            "(postgresql://user:pw@host:port/db, sqlite:///x.db, https://rest-catalog), or "
            f"the name of a catalog configured in .pyiceberg.yaml.{shown}",
        )(f)

    return add


def _rare_type_percent(
    ctx: click.Context, param: click.Parameter, value: float | None
) -> float | None:
    """``--rare-type-percent`` checked by the range the API holds it to, said for a
    terminal (no ``None``)."""
    try:
        return checked_rare_type_percent(value)
    except ValueError:
        raise click.BadParameter(
            f"{value:g} is out of range: give a share in percent above 0 and at most "
            f"{RARE_TYPE_PERCENT_MAX:g} (1 means 1%), or leave the option out for no "
            "threshold") from None


#: where ``--contract`` keeps what it was given, for :func:`evolution_settings` (the
#: commands' own parameters stay as they were)
_CONTRACTS_META = "toolkit.contracts"


def _contracts(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, str] | None:
    """``--contract FIELD=MODE`` (repeatable) checked as the API checks ``contracts=``
    (:class:`toolkit.core.batch.contracts.Contracts`), kept in the context; None when not given
    (the table's contracts hold)."""
    if not values:
        return None
    given: dict[str, str] = {}
    for value in values:
        field, sep, mode = value.rpartition("=")
        if not sep or not field:
            raise click.BadParameter(
                f"{value!r}: give FIELD=MODE, e.g. quantity=freeze or '*=discard_row'")
        given[field] = mode
    try:
        Contracts.of(given)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    ctx.meta[_CONTRACTS_META] = given
    return given


def _hints(
    ctx: click.Context, param: click.Parameter, given: tuple[str, ...]
) -> dict[str, str]:
    """``--hint FIELD=TYPE`` (repeatable) as the ``hints`` option, each checked as the API
    checks it (a later hint of the same field replaces an earlier one)."""
    hints: dict[str, str] = {}
    for text in given:
        field, sep, type_name = text.partition("=")
        if not sep or not field.strip():
            raise click.BadParameter(
                f"{text!r}: give a field and an Iceberg type, e.g. price=decimal(10,2)")
        hints[field.strip()] = type_name.strip()
    try:
        parse_hints(hints)
    except HintError as exc:
        raise click.BadParameter(str(exc)) from None
    return hints


def policy_options(f: F) -> F:
    """How records are evolved into the table: ``--policy``, ``--on-incompatible``,
    ``--detect-dates``, ``--rare-type-percent``, ``--contract`` and ``--hint`` (what a
    replay or a stream passes on to ingest); :func:`evolution_settings` makes them the options."""
    f = click.option(
        "--contract", "contracts", multiple=True, metavar="FIELD=MODE", callback=_contracts,
        expose_value=False,
        help="A contract for a top-level field ('*': every field the table has no column for "
        "yet), repeatable: evolve, freeze (a value no column of the field holds fails the "
        "batch), discard_row or discard_value (the record, or the value, goes to the "
        "quarantine). Kept with the table: later batches obey it until given again "
        "[default: the table's].",
    )(f)
    f = click.option(
        "--hint", "hints", multiple=True, metavar="FIELD=TYPE", callback=_hints,
        help="A type hint (repeatable): the top-level FIELD's column gets the Iceberg TYPE "
        "from its first batch, e.g. --hint price=decimal(10,2) --hint ts=timestamp[ms] "
        "(an epoch unit for longs read as timestamps). The table keeps its hints; hints "
        "given again replace them.",
    )(f)
    f = click.option(
        "--rare-type-percent", type=float, metavar="PERCENT", callback=_rare_type_percent,
        help="With the upsolver policy: a type that makes up less than this percent of a "
        "top-level field's values in a batch (1 means 1%) gets no new column; the records "
        "holding it are set aside in the quarantine, to replay later. Above 0, at most "
        f"{RARE_TYPE_PERCENT_MAX:g} [default: off].",
    )(f)
    f = click.option(
        "--detect-dates/--no-detect-dates", default=True, show_default=True,
        help="Type ISO-8601 date and date-time texts as date and timestamp (RULES 1).",
    )(f)
    f = click.option(
        "--on-incompatible", type=click.Choice(["quarantine", "fail"]), default="quarantine",
        show_default=True,
        help="What happens to a record the table cannot take: set aside, or fail the batch.",
    )(f)
    return click.option(
        "--policy", type=click.Choice(policy_names()), default=DEFAULT_POLICY.name,
        show_default=True,
        help="; ".join(p.line for p in POLICIES) + ".",
    )(f)


def evolution_settings(
    policy: str, on_incompatible: str, detect_dates: bool, rare_type_percent: float | None,
    hints: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The options :func:`policy_options` took, as ``make_options`` keywords (stored so in
    plan files; the rare-type threshold and the contracts only when given, so a plan file
    without them is as before). ``--rare-type-percent`` with a policy that has no such
    threshold (``widen``) is refused."""
    options: dict[str, Any] = {
        "policy": policy, "on_incompatible": on_incompatible, "detect_dates": detect_dates}
    ctx = click.get_current_context(silent=True)
    if ctx is not None and _CONTRACTS_META in ctx.meta:  # only when given (--contract)
        options["contracts"] = dict(ctx.meta[_CONTRACTS_META])
    if hints:  # only when given: the table's own hints hold otherwise (docs/rules.md)
        options["hints"] = dict(hints)
    if rare_type_percent is not None:
        options["rare_type_percent"] = rare_type_percent
        # the API says which policies take a threshold (the range was checked and the
        # other options are click's choices, so its only refusal here is that one); its
        # message names keywords, so a terminal gets one naming the command's options
        try:
            make_options(**options)
        except ValueError:
            raise click.BadParameter(
                f"the {policy} policy has no rare-type threshold; leave the option out with "
                f"--policy {policy}", param_hint="--rare-type-percent") from None
    return options


def evolution_options(f: F) -> F:
    """The evolution options a plan is made with (stored in plan files)."""
    f = policy_options(f)
    return click.option(
        "--format", "source_format", metavar="KIND",
        help="The kind of the source when its name cannot tell it (jsonl, parquet, csv...).",
    )(f)


def spark_options(f: F) -> F:
    return click.option(
        "--conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
        help="A Spark setting (repeatable), e.g. --conf spark.master=local[2].",
    )(f)


def table_argument(f: F) -> F:
    return click.argument("table", metavar="TABLE")(f)


#: a duration's units, in seconds
_UNITS = {"w": 604_800, "d": 86_400, "h": 3_600, "m": 60, "s": 1}
_PART = re.compile(r"(\d+(?:\.\d+)?)([wdhms])")


class Duration(click.ParamType[dt.timedelta, Any]):
    """A duration such as ``5d``, ``12h``, ``30m``, ``0s`` or ``1d12h`` (weeks, days,
    hours, minutes, seconds); a bare number is seconds.

    >>> DURATION.convert("1d12h", None, None), DURATION.convert("90", None, None)
    (datetime.timedelta(days=1, seconds=43200), datetime.timedelta(seconds=90))
    """

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> dt.timedelta:
        if isinstance(value, dt.timedelta):
            return value
        text = str(value).strip().lower().replace(" ", "")
        try:
            return dt.timedelta(seconds=float(text))
        except ValueError:
            pass
        parts = _PART.findall(text)
        if not text or "".join(n + u for n, u in parts) != text:
            self.fail(f"{value!r} is not a duration: write it as 5d, 12h, 30m, 90s (or 1d12h)",
                      param, ctx)
        return dt.timedelta(seconds=sum(float(n) * _UNITS[u] for n, u in parts))


DURATION = Duration()


def duration_text(span: dt.timedelta) -> str:
    """A duration the way ``--older-than`` takes it.

    >>> duration_text(dt.timedelta(days=1, hours=12)), duration_text(dt.timedelta(0))
    ('1d12h', '0s')
    """
    left, parts = int(span.total_seconds()), []
    for unit, size in _UNITS.items():
        if unit != "w" and left >= size:
            parts.append(f"{left // size}{unit}")
            left %= size
    return "".join(parts) or "0s"


class CatalogChoice:
    """How ``--catalog`` was read: the catalog, and how a plan file records it (a folder
    as an absolute path, a URL with its secrets masked (:func:`toolkit.core.values.secrets.masked`),
    a configured name as it is)."""

    def __init__(self, catalog: Catalog, recorded: str) -> None:
        self.catalog = catalog
        self.recorded = recorded


def _configured(name: str) -> bool:
    from pyiceberg.utils.config import Config

    try:
        return Config().get_catalog_config(name) is not None
    except ValueError:
        return False


def recorded_catalog(spec: str) -> str:
    """How a plan file records the catalog ``--catalog`` names, without opening it: a URL
    with its secrets masked, a configured name as it is, else the folder's absolute path."""
    if "://" in spec:
        return masked(spec)
    folder = Path(spec).expanduser()
    if not folder.exists() and _configured(spec):
        return spec
    return str(folder.resolve())


def open_catalog(spec: str, warehouse: str | None, *, must_exist: bool = False) -> CatalogChoice:
    """The catalog ``--catalog`` names: a URL (``scheme://``), else a configured catalog
    name when no folder of that name exists, else a folder (created unless
    ``must_exist``). Errors are ``click.BadParameter`` (exit code: bad input)."""
    import toolkit

    props = {} if warehouse is None else {"warehouse": warehouse}
    try:
        if "://" in spec:
            if MASK in spec:
                raise click.BadParameter(
                    f"{masked(spec)}: the password was left out of the plan file; pass "
                    "--catalog with the full URL", param_hint="--catalog")
            return CatalogChoice(toolkit.catalog(spec, **props), masked(spec))
        folder = Path(spec).expanduser()
        if not folder.exists() and _configured(spec):
            return CatalogChoice(toolkit.catalog(name=spec, **props), spec)
        if must_exist and not folder.is_dir():
            raise click.BadParameter(
                f"{spec}: no such catalog folder, and no catalog of that name is configured "
                "in .pyiceberg.yaml", param_hint="--catalog")
        return CatalogChoice(toolkit.catalog(folder, **props), str(folder.resolve()))
    except (ValueError, ModuleNotFoundError) as exc:
        # the catalog's errors mask its URL already; a folder's or a name's error is
        # masked here, in case a mistyped URL was taken for one
        raise click.BadParameter(masked(str(exc)), param_hint="--catalog") from None


def existing_table(where: CatalogChoice, table: str) -> Table:
    """``table`` in the catalog; a missing one (or a name without a namespace) is refused
    as bad input, naming the table and the catalog."""
    from toolkit.errors import TableNameError
    from toolkit.iceberg.catalog import load_table

    try:
        found = load_table(where.catalog, table)
    except TableNameError as exc:
        raise click.BadParameter(str(exc), param_hint="TABLE") from exc
    if found is None:
        raise click.BadParameter(
            f"no table {table} in catalog {where.recorded}; check the name and --catalog",
            param_hint="TABLE")
    return found


def check_source(source: str) -> str:
    """``source`` as an absolute path or glob (a plan file applies from any folder);
    refused as bad input when nothing is there."""
    if not (glob.glob(source) if glob.has_magic(source) else os.path.exists(source)):
        what = "no file matches" if glob.has_magic(source) else "no such file or folder"
        raise click.BadParameter(f"{source}: {what}", param_hint="SOURCE")
    return os.path.abspath(source)


def read_plan_file(path: str) -> PlanFile:
    return loads(Path(path).read_text(encoding="utf-8"), path)


def emit(as_json: bool, text: str, data: Mapping[str, Any]) -> None:
    """Print the result: ``text`` for people, or ``data`` as JSON (sorted keys); either with
    what a terminal would obey written out (:func:`toolkit.cli.terminal.echo`)."""
    if as_json:
        echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str),
             as_json=True)
    else:
        echo(text)


#: a failed micro-batch is not logged by Spark: ``toolkit stream`` reports it, in one
#: sentence (otherwise the driver logs errors only, as every toolkit session does)
_STREAM_QUIET = {"org.apache.spark.sql.execution.streaming.MicroBatchExecution": "off"}


def start_spark(catalog: Catalog, conf: tuple[str, ...]) -> SparkSession:
    """A Spark session on ``catalog`` that logs errors only and shows no progress bars."""
    from toolkit.spark.logs import quiet_java_option
    from toolkit.spark.session import spark_conf, spark_session

    settings: dict[str, Any] = {}  # Spark settings by their names: all texts
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r}: expected KEY=VALUE", param_hint="--conf")
        settings[key.strip()] = value.strip()
    java = spark_conf(catalog, quiet=False, **settings).get("spark.driver.extraJavaOptions", "")
    settings["spark.driver.extraJavaOptions"] = f"{java} {quiet_java_option(_STREAM_QUIET)}".strip()
    # "Starting Spark..." and "Spark ready" come from spark_session (toolkit.spark.progress)
    return spark_session(catalog, **settings)
