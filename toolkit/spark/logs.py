"""Spark's driver logging: errors only, and no banner, so a notebook cell or a terminal
shows what the toolkit says rather than Spark's warnings.

Spark's default log4j profile prints warnings (a loopback hostname, no native Hadoop
library...) and a banner about log levels whenever the class that starts the shell logs
at another level than the root; in a notebook each lands in red under the cell. A log4j2
file given at JVM start (``-Dlog4j2.configurationFile``) replaces that profile before the
first line is logged; ``setLogLevel`` comes too late for those.

>>> "rootLogger.level = error" in log_config()
True
>>> print(log_config({"org.example.Noisy": "off"}).splitlines()[-2:])
['logger.extra0.name = org.example.Noisy', 'logger.extra0.level = off']
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from toolkit.spark.tally import cache_dir

__all__ = ["log_config", "log_config_file", "quiet_java_option"]

_BASE = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.spark.name = org.apache.spark
logger.spark.level = error
"""


def log_config(levels: Mapping[str, str] | None = None) -> str:
    """The log4j2 properties: errors only on standard error, and ``levels`` (logger name
    -> level) on top."""
    lines = [_BASE]
    for i, (name, level) in enumerate(sorted((levels or {}).items())):
        lines.append(f"logger.extra{i}.name = {name}\nlogger.extra{i}.level = {level}\n")
    return "".join(lines)


def log_config_file(levels: Mapping[str, str] | None = None) -> Path:
    """:func:`log_config` in a file of the toolkit's own cache folder (where the compiled
    jar is kept: :func:`toolkit.spark.tally.cache_dir`, the user's, not the shared temp
    folder another user could write first), named by its content: written once, and a
    rename never shows half a file."""
    text = log_config(levels)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = cache_dir() / f"toolkit-log4j2-{digest}.properties"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.replace(temp, path)
    return path


def quiet_java_option(levels: Mapping[str, str] | None = None) -> str:
    """The driver Java option that makes Spark log errors only (see :func:`log_config`)."""
    return f"-Dlog4j2.configurationFile={log_config_file(levels)}"
