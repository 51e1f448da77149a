"""What a kept result was computed with: a fingerprint of the package's source files and installed
packages (issue 42: a night reuses what an earlier night computed only while the code and data
that computed it are the same)."""

from __future__ import annotations

import functools
import hashlib
from importlib import metadata
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # memory_lake/


def source_files(sources: tuple[str, ...]) -> list[Path]:
    """The files `code_fingerprint` reads for `sources` (paths below memory_lake/, files or
    folders, caches left out), in the order it reads them."""
    files = []
    for source in sources:
        root = PACKAGE / source
        files += [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file()
                                                      and "__pycache__" not in p.parts)
    return files


@functools.lru_cache(maxsize=None)
def code_fingerprint(sources: tuple[str, ...], packages: tuple[str, ...] = ()) -> str:
    """SHA-256 over the files under each of `sources` (paths below memory_lake/, files or folders,
    caches left out: `source_files`) with their names, and the installed version of each of `packages`."""
    digest = hashlib.sha256()
    for path in source_files(sources):
        digest.update(str(path.relative_to(PACKAGE)).encode())
        digest.update(path.read_bytes())
    for name in packages:
        try:
            digest.update(f"{name}={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name}=absent".encode())
    return digest.hexdigest()


def set_digest_sql(row: str) -> str:
    """SQL aggregate: a digest of the set of `row` texts in a group (their count and the sums of both
    halves of each one's md5), independent of their order, so no sort is needed. A row that holds
    the fields its order is read by fixes that order too."""
    return f"md5(concat_ws(',', count(*), sum(md5_number_upper({row})), sum(md5_number_lower({row}))))"


__all__ = ["code_fingerprint", "set_digest_sql", "source_files"]
