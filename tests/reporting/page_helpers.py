"""What a report page shows first, shared by the report tests (a test module does not import
another): the sequence of its start tags and the files it links (:class:`PageOrder`)."""

from __future__ import annotations

from html.parser import HTMLParser


class PageOrder(HTMLParser):
    """The sequence of a page's start tags (with a data-file) and whether it links a file."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []
        self.linked: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.order.append(f"{tag}:{values.get('data-file') or ''}")
        for key in ("src", "href"):
            value = values.get(key)
            if value is not None and not value.startswith("data:"):
                self.linked.append(value)
