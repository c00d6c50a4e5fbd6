"""The package version (its own module, so modules can read it without importing the package root)."""

__version__ = "0.1.0.dev0"

#: The harness revision a run records in its manifest (``harness_revision``). Settings record what a
#: user chose; this records what the code itself sends and stores beyond them. It is bumped when a
#: change makes the requests or stored values of a run recorded before it differ, so such a run can
#: be neither resumed nor replayed byte for byte by this code (it can still be verified and
#: re-scored). A manifest of ours without the key is revision 1. See docs/design/architecture.md,
#: "Harness revision".
#:   1  up to issue 13;
#:   2  search tool messages carry each result's score and page body; stored counters
#:      (``tool_calls_count``, ``nudges_used``, ``user_prompt`` on call errors) follow the earlier
#:      implementation; step metrics and search records carry cost, cached tokens and detector usage.
HARNESS_REVISION = 2

#: The analysis revision ``summary.json`` records (``analysis_revision``): bumped when the analysis
#: pass writes different files or bytes from the same DBs (new tables, plot format, new keys), so
#: ``verify`` can tell a run published by an older analysis from a tampered one. A summary records
#: the last revision that changed its own convention's output (``ANALYSIS_REVISIONS``), so a bump
#: for one convention leaves the other's published runs byte-identical. A summary without the key
#: is revision 1. See docs/design/reviewing.md, "Analysis revision".
#:   1  up to issue 16;
#:   2  ``table_counts``, plots at 300 dpi PNG plus SVG with missing buckets drawn as missing,
#:      count and ``call_failures`` keys in ``summary.json``;
#:   3  ``reference-v4`` only: the majority-vote gain is undefined at n = 1 and the entropy–accuracy
#:      buckets are equal-count thirds, as in the earlier implementation;
#:   4  both conventions: reported sums, means, ratios, bootstrap bounds and logarithms are exact or
#:      exactly rounded (``analysis/exact.py``), no longer left to numpy's and BLAS's summation order;
#:   5  both conventions: pairwise tests (paired-bootstrap p-values, Holm, Benjamini–Hochberg) and
#:      rank stability of composite accuracy (``summary.json`` ``comparisons``, ``table_pairs``);
#:   6  ``reference-v4`` only: every CSV number has 4 decimals (Table 3's costs had 2 and 3), as in the
#:      earlier implementation's CSVs.
ANALYSIS_REVISIONS: dict[str, int] = {"paper": 5, "reference-v4": 6}
ANALYSIS_REVISION = max(ANALYSIS_REVISIONS.values())
