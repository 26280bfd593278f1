"""``madcluster report``: benchmark result JSONs -> one self-contained HTML page or GitHub Markdown.

Table 1's shape per dataset (each model alone and + MADCluster, the paper's row beside it), the
evaluation decomposition and compute tables when their files are present, per-dataset figures,
every number traceable to its command and commit, and oracle / leak measurements marked.

:mod:`.tables` builds the content, :mod:`.render` writes it; :mod:`.format` is how every results
table (this report, ``results.md``, the benchmark scripts) names columns and prints numbers. This
``__init__`` imports nothing, so the benchmark can use :mod:`.format` without the report.
"""
