"""Panels (``oracleproto panel``): one comparable result from several runs or shards of one experiment.

See docs/run-at-scale.md (Panels). ``build`` assembles a panel directory, ``verify`` checks it
(every member, the merge and the analysis), ``replay`` replays every member byte for byte.
"""

from __future__ import annotations

from oracleproto.panel.build import BuiltPanel, build_panel
from oracleproto.panel.spec import PanelError, PanelSpec, load_spec

__all__ = ["BuiltPanel", "PanelError", "PanelSpec", "build_panel", "load_spec"]
