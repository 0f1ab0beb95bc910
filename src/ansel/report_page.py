"""The HTML report's first page (workflow/report/workflow.rst, rendered by ``snakemake --report``).

``inline-figure`` is a figure whose PNG sits in the page as a data URI, so the one-file report
shows it: Snakemake's own ``embeddedfigure`` (9.27) puts the data URI in the directive's options
after docutils has built the image node, whose src stays the file's path (broken outside the
checkout). Registered when the Snakefile imports this module.
"""

from docutils.parsers.rst import directives
from docutils.parsers.rst.directives.images import Figure
from snakemake.report.common import data_uri_from_file


class InlineFigure(Figure):
    """``.. inline-figure:: <path>``: docutils' figure, its image read from <path> into the page."""

    def run(self):
        path = self.arguments[0]
        self.options.setdefault("alt", path)
        self.arguments[0] = data_uri_from_file(path)
        return super().run()


directives.register_directive("inline-figure", InlineFigure)
