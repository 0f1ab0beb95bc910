"""A table's .html twin: what the HTML report shows of it (caption, the table, the notes)."""

from html.parser import HTMLParser

import pandas as pd

from ansel.report.tables import write_table
from ansel.specs import TableSpec


class Shown(HTMLParser):
    """The text of each element kind, as a browser would display it (entities decoded)."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.text: dict[str, list[str]] = {}
        self.open: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag != "meta":  # a void element: it never closes
            self.open.append(tag)

    def handle_endtag(self, tag):
        self.open.pop()

    def handle_data(self, data):
        if self.open and data.strip():
            self.text.setdefault(self.open[-1], []).append(data.strip())


def test_the_html_shows_caption_table_and_notes_escaped(tmp_path):
    wide = pd.DataFrame(
        {"MAP ours": ["0.71 ± 0.02 (n=2) †", "<b>0.5</b>"], "MAP published": ["0.69", "—"]},
        index=["AP-CNN", "QA & CNN"],
    )
    table = TableSpec("p", "t", caption="WikiQA <test>", notes=("from the spec",))
    write_table(wide.reset_index(), wide, {}, table, ["ours = mean & std"], tmp_path / "t")

    html = (tmp_path / "t.html").read_text(encoding="utf-8")
    assert html.startswith('<meta charset="utf-8">')  # ± and † where the file is opened on its own
    assert "<b>0.5</b>" not in html and "<test>" not in html  # text, never markup
    shown = Shown(html)
    assert shown.text["strong"] == ["WikiQA <test>"]
    assert shown.text["th"] == ["MAP ours", "MAP published", "AP-CNN", "QA & CNN"]
    assert shown.text["td"] == ["0.71 ± 0.02 (n=2) †", "0.69", "<b>0.5</b>", "—"]
    assert shown.text["li"] == ["from the spec", "ours = mean & std"]
