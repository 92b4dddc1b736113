"""Exact token counts from the Anthropic token-counting API, for text a transcript has no
usage numbers for. The SDK is imported only here, and only when counting is configured."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memtui.errors import MemtuiError


class CountFailed(MemtuiError):
    """The token-counting API could not be used; the caller falls back to estimates."""


def anthropic_client(client: Any = None, timeout: float = 30.0) -> Any:
    """The given client, or a real one (reads ANTHROPIC_API_KEY)."""
    if client is not None:
        return client
    import anthropic

    return anthropic.Anthropic(timeout=timeout, max_retries=2)


def count_tokens(texts: Sequence[str], model: str, client: Any = None) -> int:
    """Tokens of ``texts`` as one user message, counted by the provider's tokenizer."""
    import anthropic

    body = "\n\n".join(t for t in texts if t) or " "
    try:
        result = anthropic_client(client).messages.count_tokens(
            model=model, messages=[{"role": "user", "content": body}])
    except (anthropic.AnthropicError, TypeError) as exc:
        # TypeError: the SDK found no API key or credentials to send.
        raise CountFailed(f"token counting failed: {type(exc).__name__}: {exc}") from exc
    return int(result.input_tokens)
