"""``madcluster report``: benchmark result JSONs -> one self-contained HTML page or GitHub Markdown.

Table 1's shape per dataset (each model alone and + MADCluster, the paper's row beside it), the
evaluation decomposition and compute tables when their files are present, per-dataset figures,
every number traceable to its command and commit, and oracle / leak measurements marked.
"""

from madcluster.reporting.render import render_html, render_markdown, report_format, write_report
from madcluster.reporting.tables import ReportContent, build_content

__all__ = ["ReportContent", "build_content", "render_html", "render_markdown", "report_format", "write_report"]
