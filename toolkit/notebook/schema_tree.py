"""A schema as a tree, shared by the preview panel and the evolution editor: the nodes
(plain data, new fields marked) and their HTML (nested lists, docs shown).

>>> from toolkit.core.values.types import Column, Struct
>>> [(n.name, n.new) for n in schema_tree(Struct((Column(1, "a", "long"),)), [1])]
[('a', True)]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from toolkit.core.values.types import Column, ColumnType, ListOf, Struct, type_to_str
from toolkit.notebook.common import badge, scroll_box, text_html, wrap

__all__ = ["SchemaNode", "schema_tree", "schema_tree_html"]


@dataclass(frozen=True, slots=True)
class SchemaNode:
    """One field of a schema tree; list elements are nodes named ``element``."""

    path: tuple[str, ...]
    name: str
    field_id: int
    type: str
    doc: str | None
    new: bool
    """The plan adds this field (its ID is not in the schema before)."""
    required: bool = False
    children: tuple[SchemaNode, ...] = ()

    @property
    def full_name(self) -> str:
        return ".".join(self.path)

    def walk(self) -> Iterator[SchemaNode]:
        yield self
        for c in self.children:
            yield from c.walk()


def schema_tree(struct: Struct, new_ids: Iterable[int] = ()) -> tuple[SchemaNode, ...]:
    """A struct as a tree of nodes; the fields whose IDs are in ``new_ids`` are new."""
    fresh = frozenset(new_ids)
    return tuple(_column_node(c, (), fresh) for c in struct.fields)


def _column_node(col: Column, parent: tuple[str, ...], new: frozenset[int]) -> SchemaNode:
    path = (*parent, col.name)
    return SchemaNode(
        path, col.name, col.id, type_to_str(col.type), col.doc, col.id in new, col.required,
        _type_children(col.type, path, new),
    )


def _type_children(
    t: ColumnType, path: tuple[str, ...], new: frozenset[int]
) -> tuple[SchemaNode, ...]:
    if isinstance(t, Struct):
        return tuple(_column_node(c, path, new) for c in t.fields)
    if isinstance(t, ListOf):
        inner = (*path, "element")
        return (
            SchemaNode(
                inner, "element", t.element_id, type_to_str(t.element), None,
                t.element_id in new, False, _type_children(t.element, inner, new),
            ),
        )
    return ()


# --- HTML ---------------------------------------------------------------------------------


def schema_tree_html(nodes: Iterable[SchemaNode], *, title: str = "") -> str:
    """A schema as nested lists: ``id: name: type``, new fields marked, docs shown."""
    nodes = tuple(nodes)
    head = f"<b>{text_html(title)}</b>" if title else ""
    if not nodes:
        return wrap(f'{head}<p class="tknb-muted">(no columns)</p>')
    # a schema of 5,000 fields scrolls in its own box, beside the other tree
    return wrap(head + scroll_box(_tree(nodes)))


def _tree(nodes: Iterable[SchemaNode]) -> str:
    items = []
    for n in nodes:
        css = ' class="tknb-new"' if n.new else ""
        doc = f' <span class="tknb-doc">{text_html(n.doc)}</span>' if n.doc else ""
        new = badge("new", "new") if n.new else ""
        required = " required" if n.required else ""
        children = _tree(n.children) if n.children else ""
        items.append(
            f"<li><span{css}>{n.field_id}: {text_html(n.name)}: {text_html(_short_type(n))}"
            f"{required}</span>{new}{doc}{children}</li>"
        )
    return f'<ul class="tknb-tree">{"".join(items)}</ul>'


def _short_type(n: SchemaNode) -> str:
    """Structs and lists of structs show their fields as children, not inline."""
    if n.children and "struct<" in n.type:
        return n.type.split("struct<", 1)[0] + "struct<…>" + ">" * n.type.count("list<")
    return n.type
