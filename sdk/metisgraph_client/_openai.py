"""A model for the loop from any OpenAI-compatible chat completions endpoint."""

from __future__ import annotations

from typing import Any

import httpx

from metisgraph_client._errors import MetisgraphError

__all__ = ["OpenAIChatModel"]


class OpenAIChatModel:
    """``OpenAIChatModel(base_url, model=…, api_key=…)`` is a callable ``prompt -> reply``:
    the prompt as one user message to ``{base_url}/chat/completions``, the first choice's
    content back. Works with any server that speaks that API (vLLM, llama.cpp, Ollama, …)."""

    def __init__(self, base_url: str, *, model: str, api_key: str | None = None,
                 temperature: float = 0.0, timeout: float = 120.0,
                 transport: httpx.BaseTransport | None = None) -> None:  # fmt: skip
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._temperature = temperature
        self._http = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    def __call__(self, prompt: str) -> str:
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": self._temperature,
        }
        try:
            response = self._http.post(self._url, json=body)
        except httpx.TransportError as error:
            raise MetisgraphError(f"model endpoint unreachable: {error}") from error
        if response.status_code != 200:
            raise MetisgraphError(f"model endpoint answered HTTP {response.status_code}: "
                                  f"{response.text[:300]}")  # fmt: skip
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise MetisgraphError(f"model endpoint gave no choices[0].message.content: "
                                  f"{error!r}") from None  # fmt: skip
        return str(content)

    def close(self) -> None:
        self._http.close()
