"""A provider that has no model by the configured slug: a configuration error that stops the run.

Table 14 files a 404 ``model_not_found`` under "anything else" (``unknown``): every sample then
failed alike, and the run ended as an outage (exit 4, after the circuit breaker) or, below the
breaker's count, as a finished run. A wrong slug is neither: nothing changes until the setting
does. The first live reply saying so stops the run (exit 2) with the provider's words and the
slug. A replayed one keeps the outcome it was recorded with (a call error ``unknown``, or a
``failed:unknown`` verdict), so earlier recordings replay byte for byte.
"""

from __future__ import annotations

from oracleproto.errors import ErrorKind, RunStoppedError
from oracleproto.providers.monitor import host_of

#: The setting that names the slug, per channel.
MODEL_SETTINGS = {"llm": "MODELS", "detector": "LEAK_DETECTOR_MODEL"}


class ModelNotFoundError(RunStoppedError):
    """The provider has no model by this slug (or not for this key): fix the setting (exit 2)."""

    def __init__(
        self,
        message: str,
        *,
        model: str = "",
        status_code: int | None = None,
        channel: str | None = None,
        remedy: str = "",
    ) -> None:
        super().__init__(ErrorKind.UNKNOWN, message, status_code=status_code, channel=channel, remedy=remedy)
        self.model = model
        # Shown as a configuration error, not under Table 14's "unknown" (the kind replays keep).
        self.args = (f"model not found: {message}",)


def model_not_found(
    model: str, *, channel: str, url: str, said: str, status_code: int | None
) -> ModelNotFoundError:
    """The error for ``model`` refused at ``url``: what the provider said, and what to change."""
    setting = MODEL_SETTINGS.get(channel, "the model setting")
    answered = f"HTTP {status_code}" if status_code is not None else "an error object in a 200 reply"
    message = (
        f"the {channel} provider at {host_of(url)} has no model {model!r} ({answered}: {said}). "
        f"Check the slug against the provider's model list (`oracleproto plan --check-models` lists "
        f"what the endpoint serves) and correct {setting}; a run's models are part of its identity, "
        "so start a new run with the corrected slug"
    )
    return ModelNotFoundError(
        message,
        model=model,
        status_code=status_code,
        channel=channel,
        remedy=f"only if the provider starts serving {model!r} (access granted, model deployed)",
    )
