"""The ledger's one error: it cannot be reached, so the shard stops before its next paid call."""

from __future__ import annotations

from oracleproto.errors import ErrorKind, ProviderUnavailableError


class LedgerUnavailableError(ProviderUnavailableError):
    """The shared ledger (``LEDGER_URL``) did not answer: the run stops resumably (exit 4) rather
    than make a paid call that no shard's count would see."""

    def __init__(self, message: str, *, remedy: str = "") -> None:
        super().__init__(ErrorKind.NETWORK, message, channel="ledger", remedy=remedy)
        # Not a provider's network failure: the message says what happened without ``network:``.
        self.args = (f"ledger: {message}",)

    def __str__(self) -> str:
        return str(self.args[0])
