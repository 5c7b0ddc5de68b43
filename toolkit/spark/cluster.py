"""What a Spark cluster's executors need, and what they cannot reach.

On ``local[*]`` the executors are threads of the driver's JVM and share its disk and its
Python. On a cluster (``spark://``, ``yarn``, ``k8s://``) they run elsewhere: the
toolkit's own Python code reaches them only as a zip Spark ships
(``spark.submit.pyFiles``), and a path on the driver's disk names nothing on theirs, so
a local warehouse or input path is refused unless the user says every machine sees it
(``shared_disk=True``: NFS, or a "cluster" on one machine).

>>> is_local_master("local[2]"), is_local_master("spark://10.0.0.1:7077")
(True, False)
>>> is_local_location("/data/in"), is_local_location("file:///data"), is_local_location("s3a://b/k")
(True, True, False)
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.errors import SparkSetupError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "SHARED_DISK",
    "check_reachable",
    "is_local_location",
    "is_local_master",
    "package_zip",
    "reachable_input",
]

#: the Spark setting recording that executors see the driver's disk at the same paths
SHARED_DISK = "spark.toolkit.sharedDisk"


def is_local_master(master: str) -> bool:
    """Whether ``master`` runs executors inside the driver's process (``local``,
    ``local[4]``, ``local-cluster[...]`` is not: its executors are separate JVMs)."""
    return master == "local" or master.startswith("local[")


def is_local_location(location: str) -> bool:
    """Whether ``location`` is a path on this machine's disk (no scheme, or ``file:``)."""
    if "://" in location:
        return location.startswith("file:")
    return True  # a plain path, or "file:/x"


def check_reachable(master: str, location: str, what: str, *, shared_disk: bool) -> None:
    """Refuse ``location`` (``what`` says what it is) when executors of ``master`` cannot
    read it: a local path on a cluster whose machines do not share the driver's disk."""
    if shared_disk or is_local_master(master) or not is_local_location(location):
        return
    raise SparkSetupError(
        f"{what} {location!r} is on this machine's disk, which executors on {master} do "
        "not see: what they write there lands on their own disks (and is lost to this "
        "one), and what they read there is not found. Use a location every machine "
        "reaches (s3://, hdfs://, ...), or pass shared_disk=True to spark_session if "
        "every machine sees this path (NFS, or a cluster on this machine)."
    )


def reachable_input(spark: SparkSession, location: str) -> None:
    """:func:`check_reachable` for an input path read by ``spark``'s executors."""
    master = str(spark.sparkContext.master)
    if is_local_master(master):  # (the setting is a JVM round trip: not on every batch)
        return
    shared = spark.conf.get(SHARED_DISK, "false") == "true"
    check_reachable(master, location, "The input path", shared_disk=shared)


def package_zip() -> Path:
    """A zip of the ``toolkit`` package, for ``spark.submit.pyFiles``: executors import
    the very code the driver runs. Cached by content, so it is built once per version."""
    root = Path(__file__).resolve().parents[1]  # the toolkit package folder
    files = sorted(
        p for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )
    digest = hashlib.sha256()
    for p in files:
        digest.update(str(p.relative_to(root)).encode())
        digest.update(p.read_bytes())
    folder = Path(tempfile.gettempdir()) / f"toolkit-pyfiles-{os.getuid()}"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"toolkit-{digest.hexdigest()[:16]}.zip"
    if not target.exists():
        partial = target.with_suffix(f".{os.getpid()}.part")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
            for p in files:
                zf.write(p, Path("toolkit") / p.relative_to(root))
        partial.replace(target)  # atomic: a concurrent builder never sees half a zip
    return target
