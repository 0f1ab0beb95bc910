"""The report's first page embeds its figures: one self-contained HTML file, no links to the checkout."""

import base64

from docutils.core import publish_parts

import ansel.report_page  # noqa: F401  (registers inline-figure)


def test_an_inline_figure_is_its_png_as_a_data_uri(tmp_path):
    png = tmp_path / "curve.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n not a real image: the bytes only travel")
    body = publish_parts(f".. inline-figure:: {png}\n\n   the caption\n", writer="html")["body"]

    src = body.split('src="')[1].split('"')[0]
    assert src.startswith("data:image/png;") and base64.b64decode(src.partition(";base64,")[2]) == png.read_bytes()
    assert f'alt="{png}"' in body and "the caption" in body
