"""Runtime protocols appended after the static template (paper App. B.4), each fingerprinted.

Which protocols are on, and with which texts: the built-in wording (``protocol_texts.py``)
switched by the ``ENABLE_*`` settings, or a ``PROTOCOLS_FILE`` layout (``layout.py``) whose
listed blocks are on. Only ``{{max_steps}}`` / ``{{max_search_calls}}`` are filled in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from oracleproto.errors import ConfigError
from oracleproto.primitives.hashing import sha256_16
from oracleproto.prompts.layout import BUILTIN_LAYOUT, ProtocolBlock, ProtocolLayout
from oracleproto.prompts.placeholders import fill_placeholders, placeholders_in
from oracleproto.prompts.protocol_texts import (
    BELIEF_PROTOCOL_TEXT,
    BUDGET_FOOTER_TEXT,
    REFLECTION_PROTOCOL_TEXT,
)
from oracleproto.settings.model import ReactSettings

__all__ = [
    "BELIEF_PROTOCOL_TEXT",
    "REFLECTION_PROTOCOL_TEXT",
    "Budget",
    "RuntimeProtocols",
    "budget_footer_text",
]


@dataclass(frozen=True)
class Budget:
    """The ReAct budget the footer announces: message-round cap T and search-call cap C."""

    max_steps: int
    max_search_calls: int

    def __post_init__(self) -> None:
        if self.max_steps <= 0:
            raise ConfigError(f"budget footer: max_steps (T) must be > 0, got {self.max_steps}")
        if self.max_search_calls < 0:
            raise ConfigError(
                f"budget footer: max_search_calls (C) must be >= 0, got {self.max_search_calls}"
            )

    def placeholder_values(self) -> dict[str, str]:
        """The values of ``{{max_steps}}`` and ``{{max_search_calls}}``."""
        return {"max_steps": str(self.max_steps), "max_search_calls": str(self.max_search_calls)}


def budget_footer_text(budget: Budget) -> str:
    """The built-in budget footer announcing T message rounds and C searches."""
    return fill_placeholders(BUDGET_FOOTER_TEXT, budget.placeholder_values())


@dataclass(frozen=True)
class RuntimeProtocols:
    """Which runtime protocols are appended to the rendered template, with which layout."""

    reflection: bool = False
    belief: bool = False
    budget: Budget | None = None
    #: Texts, order, separator and suffix; the built-in one unless a PROTOCOLS_FILE gave another.
    layout: ProtocolLayout = BUILTIN_LAYOUT
    #: T and C for placeholders in other blocks while the footer is off (a file may use them anywhere).
    limits: Budget | None = None
    #: How the run_meta hashes are computed (a harness profile's ``fingerprints``): block hashes of
    #: the ``text`` as written or ``framed`` (separator + text + terminator); the budget's hash of
    #: its ``filled_text``, or ``none``.
    block_hash: Literal["text", "framed"] = "text"
    budget_hash: Literal["none", "filled_text"] = "filled_text"

    def __post_init__(self) -> None:
        missing = [name for name in self._enabled() if self.layout.text(name) is None]
        if missing:
            raise ConfigError(
                f"runtime protocols: {', '.join(missing)} switched on, but the protocol layout has no "
                f"{' or '.join(missing)} block; add the block to the protocols file (or the harness "
                "profile's protocols) or switch it off"
            )

    @classmethod
    def none(cls) -> RuntimeProtocols:
        """No protocols: the bare template rendering."""
        return cls()

    @classmethod
    def default(cls, max_steps: int, max_search_calls: int) -> RuntimeProtocols:
        """The paper's run: budget footer and reflection scaffold, belief block off."""
        return cls(reflection=True, budget=Budget(max_steps, max_search_calls))

    @classmethod
    def all(cls, max_steps: int, max_search_calls: int) -> RuntimeProtocols:
        """Every protocol: reflection scaffold, belief block and budget footer."""
        return cls(reflection=True, belief=True, budget=Budget(max_steps, max_search_calls))

    @classmethod
    def from_settings(cls, react: ReactSettings, layout: ProtocolLayout = BUILTIN_LAYOUT) -> RuntimeProtocols:
        """The protocols of ``layout`` (default: the built-in texts) that ``ReactSettings`` switch on."""
        limits = Budget(react.max_steps, react.max_search_calls)
        return cls(
            reflection=react.reflection_protocol,
            belief=react.belief_protocol,
            budget=limits if react.budget_footer else None,
            layout=layout,
            limits=limits,
        )

    @classmethod
    def from_layout(cls, layout: ProtocolLayout, max_steps: int, max_search_calls: int) -> RuntimeProtocols:
        """A protocols file's layout: every block it lists is on, in its order."""
        limits = Budget(max_steps, max_search_calls)
        names = layout.names
        return cls(
            reflection="reflection" in names,
            belief="belief" in names,
            budget=limits if "budget" in names else None,
            layout=layout,
            limits=limits,
        )

    def with_search_calls(self, max_search_calls: int) -> RuntimeProtocols:
        """The same protocols announcing another C (a grid cell's search cap)."""
        budget, limits = self.budget, self.limits
        return replace(
            self,
            budget=None if budget is None else Budget(budget.max_steps, max_search_calls),
            limits=None if limits is None else Budget(limits.max_steps, max_search_calls),
        )

    @property
    def search_enabled(self) -> bool:
        """E: the samples these protocols introduce may search (their C is above 0)."""
        values = self.budget or self.limits
        return values is None or values.max_search_calls > 0

    def _text_of(self, block: ProtocolBlock) -> str:
        """The text a block shows: ``text_search_disabled`` (when it has one) if nothing may be searched."""
        if not self.search_enabled and block.text_search_disabled is not None:
            return block.text_search_disabled
        return block.text

    @property
    def reflection_text(self) -> str | None:
        """The reflection scaffold as written (unformatted), or None when off."""
        return self.layout.text("reflection") if self.reflection else None

    @property
    def belief_text(self) -> str | None:
        """The belief-block request as written (unformatted), or None when off."""
        return self.layout.text("belief") if self.belief else None

    @property
    def budget_footer_text(self) -> str | None:
        """The budget footer with T and C filled in, or None when off."""
        block = self._block("budget")
        if self.budget is None or block is None:
            return None
        return fill_placeholders(self._text_of(block), self.budget.placeholder_values())

    def _block(self, name: str) -> ProtocolBlock | None:
        return next((block for block in self.layout.blocks if block.name == name), None)

    def order(self) -> list[str]:
        """The names of the enabled blocks, in the layout's append order."""
        enabled = self._enabled()
        return [block.name for block in self.layout.blocks if block.name in enabled]

    def _enabled_blocks(self) -> list[ProtocolBlock]:
        enabled = self._enabled()
        return [block for block in self.layout.blocks if block.name in enabled]

    def blocks(self) -> list[str]:
        """The enabled protocol texts, placeholders filled, in the layout's append order."""
        return [self._filled(block.name, self._text_of(block)) for block in self._enabled_blocks()]

    def append_to(self, rendered: str) -> str:
        """``rendered`` followed by each enabled block in its framing, then the suffix."""
        separator = self.layout.separator
        framed = (
            block.framed(separator, self._filled(block.name, self._text_of(block)))
            for block in self._enabled_blocks()
        )
        return rendered + "".join(framed) + self.layout.suffix

    def fingerprints(self) -> dict[str, str | None]:
        """sha256-16 of each protocol text (None when off), keyed as in ``run_meta``.

        Reflection and belief hash their unformatted text (one value per run), framed when the
        profile says so; the footer hashes its filled text, so it tracks T and C (or is not hashed).
        """
        return {
            "reflection_protocol_hash": self.block_fingerprint("reflection", self.reflection_text),
            "belief_protocol_hash": self.block_fingerprint("belief", self.belief_text),
            "budget_footer_hash": None
            if self.budget_hash == "none"
            else _fingerprint(self.budget_footer_text),
        }

    def block_fingerprint(self, name: str, text: str | None) -> str | None:
        """The hash ``text`` gets as block ``name``'s text (profile §11: as written, or framed)."""
        block = self._block(name)
        if text is None or block is None or self.block_hash == "text":
            return _fingerprint(text)
        return _fingerprint(block.framed(self.layout.separator, text))

    def layout_fingerprint(self) -> str | None:
        """sha256-16 of a non-built-in layout (texts, order, separator, suffix); None when built-in."""
        return None if self.layout.is_builtin else self.layout.fingerprint()

    def _enabled(self) -> set[str]:
        flags = {"reflection": self.reflection, "belief": self.belief, "budget": self.budget is not None}
        return {name for name, on in flags.items() if on}

    def _filled(self, name: str, text: str) -> str:
        values = self.budget or self.limits
        if values is None:
            if placeholders_in(text):
                raise ConfigError(
                    f"runtime protocols: the {name} block uses {placeholders_in(text)[0]}, but no "
                    "budget (T, C) was given to fill it in"
                )
            return text
        return fill_placeholders(text, values.placeholder_values())


def _fingerprint(text: str | None) -> str | None:
    return None if text is None else sha256_16(text)
