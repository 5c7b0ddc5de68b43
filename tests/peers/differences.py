"""stub"""
DIFFERENCES: dict[str, tuple[str, str, str]] = {}
NOT_RUN: tuple[str, ...] = ()


def docs_rows() -> list[str]:
    return []
