"""A file whose name starts with a dot is one a writer has not finished (the inbox convention:
write a hidden temporary name, then rename it): ingest leaves it alone even when it ends in
``.jsonl`` or ``.parquet``, names it nowhere as unrecognised, and takes it once it is renamed."""

from __future__ import annotations

import json

import polars as pl

from memory_lake.cli import main

from ..conftest import AS_OF, rows, write_jsonl


def test_leading_dot_files_wait_until_they_are_renamed(lake, capsys):
    inbox = lake.inbox
    write_jsonl(inbox / "0001.jsonl", [{"id": "done", "tenant": "acme", "content": "a complete snapshot"}])
    # half-written: a broken last line that would be quarantined if it were read
    write_jsonl(inbox / ".0002.jsonl", [{"id": "half", "tenant": "acme", "content": "still being written"},
                                        '{"id": "cut", "tenant": "ac'])
    write_jsonl(inbox / "sub" / ".0003.ndjson", [{"id": "deep", "tenant": "acme", "content": "hidden in a folder"}])
    pl.DataFrame({"id": ["pq"], "tenant": ["acme"], "content": ["hidden parquet"]}).write_parquet(inbox / ".0004.parquet")
    (inbox / ".DS_Store").write_bytes(b"\x00\x01")
    root = str(lake.root)

    assert main(["--lake", root, "--json", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["inbox_files"], status["inbox_unrecognised"]) == (1, [])

    assert main(["--lake", root, "--json", "ingest", "--as-of", "2026-11-30T00:00:00Z"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert ([f["file"] for f in report["per_file"]], report["quarantined"], report["unrecognised_files"]) == (
        ["0001.jsonl"], 0, [])
    assert rows(lake, "SELECT id FROM memories ORDER BY id") == [{"id": "done"}]
    assert rows(lake, "SELECT count(*) AS n FROM quarantine") == [{"n": 0}]
    assert sorted(str(p.relative_to(inbox)) for p in inbox.rglob("*") if p.is_file()) == [
        ".0002.jsonl", ".0004.parquet", ".DS_Store", "sub/.0003.ndjson"]

    # the writer finishes and renames: the next run takes the files, once
    write_jsonl(inbox / ".0002.jsonl", [{"id": "half", "tenant": "acme", "content": "still being written"}])
    (inbox / ".0002.jsonl").rename(inbox / "0002.jsonl")
    (inbox / "sub" / ".0003.ndjson").rename(inbox / "sub" / "0003.ndjson")
    report = lake.ingest(as_of=AS_OF).as_dict()
    assert ([f["file"] for f in report["per_file"]], report["ingested"]) == (["0002.jsonl", "sub/0003.ndjson"], 2)
    assert rows(lake, "SELECT id FROM memories ORDER BY id") == [{"id": "deep"}, {"id": "done"}, {"id": "half"}]


def test_a_hidden_path_given_by_name_is_refused(lake, tmp_path):
    """Named on the command line, a temporary file is an error that says so, not a silent skip."""
    from memory_lake.store.errors import InputError

    path = write_jsonl(tmp_path / ".notes.jsonl", [{"tenant": "acme", "content": "hidden"}])
    try:
        lake.ingest([path], as_of=AS_OF)
    except InputError as error:
        assert str(error) == f"{path.resolve()}: not a snapshot (expected .jsonl, .ndjson, .json, .parquet)"
    else:
        raise AssertionError("a hidden file named on the command line was ingested")
    assert rows(lake, "SELECT count(*) AS n FROM memories") == [{"n": 0}]
