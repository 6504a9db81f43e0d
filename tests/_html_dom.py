"""A tiny DOM built with the standard library's HTML parser, for checking rendered pages in tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    parent: Node | None = None
    children: list[Node | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, id: str | None = None) -> list[Node]:
        return [
            n
            for n in self.iter()
            if (tag is None or n.tag == tag)
            and (cls is None or cls in n.classes)
            and (id is None or n.attrs.get("id") == id)
        ]

    def find(self, tag: str | None = None, cls: str | None = None, id: str | None = None) -> Node:
        found = self.find_all(tag, cls, id)
        if not found:
            raise AssertionError(f"no <{tag or '*'}> with class={cls!r} id={id!r}")
        return found[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.cur = self.root
        self.start_tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.comments: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.start_tags.append((tag, attrs))
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.start_tags.append((tag, attrs))
        self.cur.children.append(Node(tag, dict(attrs), self.cur))

    def handle_endtag(self, tag):
        node = self.cur
        while node is not None and node.tag != tag:
            node = node.parent
        if node is None:
            raise AssertionError(f"stray </{tag}>")
        if node is not self.cur:
            raise AssertionError(f"</{tag}> closes <{node.tag}> while <{self.cur.tag}> is open")
        self.cur = node.parent  # type: ignore[assignment]

    def handle_data(self, data):
        self.cur.children.append(data)

    def handle_comment(self, data):
        self.comments.append(data)


def parse(page: str) -> tuple[Node, _Builder]:
    b = _Builder()
    b.feed(page)
    b.close()
    if b.cur is not b.root:
        raise AssertionError(f"unclosed <{b.cur.tag}>")
    return b.root, b
