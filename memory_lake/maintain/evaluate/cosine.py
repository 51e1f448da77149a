"""The MiniLM cosines that retention and accuracy fall back to when word overlap cannot settle a
pair (texts without Chinese characters only), encoded in one batch and cached per process."""

from __future__ import annotations

from typing import Any

from .fact import _CJK

_VECTOR_CACHE: dict[tuple[str, str], Any] = {}
_VECTOR_CACHE_MAX = 50_000


class _Cosine:
    """MiniLM cosines between texts without Chinese characters (MiniLM does not read Chinese).
    Only the pairs that word overlap could not settle are asked for (`want`), then encoded in one
    batch (`compute`); vectors are kept per process, so a source scored against many summaries is
    encoded once. None for a pair it cannot judge (Chinese text, no model)."""

    def __init__(self, model_name: str | None):
        self.model_name = model_name if model_name and model_name.lower() != "none" else None
        self.wanted: set[str] = set()

    def want(self, *texts: str) -> None:
        if self.model_name:
            self.wanted.update(t for t in texts if t and not _CJK.search(t))

    def compute(self) -> None:
        todo = sorted(t for t in self.wanted if (self.model_name, t) not in _VECTOR_CACHE)
        if not todo:
            return
        from ...text import ModelUnavailable, encode, load_model

        try:
            model = load_model(self.model_name)
        except ModelUnavailable:
            self.model_name = None
            return
        vectors, _ = encode(model, todo, batch_size=64)
        if len(_VECTOR_CACHE) + len(todo) > _VECTOR_CACHE_MAX:
            _VECTOR_CACHE.clear()
        for text, vector in zip(todo, vectors.to_numpy()):
            _VECTOR_CACHE[(self.model_name, text)] = vector

    def __call__(self, a: str, b: str) -> float | None:
        va, vb = _VECTOR_CACHE.get((self.model_name, a)), _VECTOR_CACHE.get((self.model_name, b))
        if self.model_name is None or va is None or vb is None:
            return None
        return float(va @ vb)
