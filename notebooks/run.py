"""Run the analyst's notebooks headless against a lake and render each to HTML (`make notebooks-run`).

    python notebooks/run.py [--lake DIR] [--out reports/notebooks] [--tenant T] [NAME ...]

Each notebook runs in a real kernel with its papermill parameters (`lake`, and `tenant` when given);
the executed notebook (``.ipynb``) and its HTML (no script or style from the network: the page opens
offline) go to `--out`. A notebook that fails is rendered too, up to the failing cell, and named at the
end; the exit status is 1 when any failed, 2 when the lake is not there.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def render_html(notebook_path: Path, html_path: Path) -> None:
    """`notebook_path` as one HTML file that loads nothing from the network."""
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(mathjax_url="", require_js_url="")  # the default pulls both from a CDN
    html, _ = exporter.from_notebook_node(nbformat.read(notebook_path, as_version=4))
    html_path.write_text(html, encoding="utf-8")
    html_path.chmod(0o644)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebooks to run (default: every NN_*.ipynb here)")
    parser.add_argument("--lake", type=Path, default=None,
                        help="the lake (default $MEMORY_LAKE_DIR, else ./lake)")
    parser.add_argument("--out", type=Path, default=Path("reports/notebooks"), help="where the results go")
    parser.add_argument("--tenant", default=None, help="the notebooks' tenant parameter (default: all tenants)")
    args = parser.parse_args(argv)

    lake = (args.lake or Path(os.environ.get("MEMORY_LAKE_DIR") or "lake")).resolve()
    if not (lake / "lake.duckdb").exists():
        print(f"no lake at {lake}: run `make demo` first, or set MEMORY_LAKE_DIR (or --lake) to your lake",
              file=sys.stderr)
        return 2
    available = sorted(p.name for p in HERE.glob("[0-9][0-9]_*.ipynb"))
    names = args.names or available
    unknown = [n for n in names if (n if n.endswith(".ipynb") else f"{n}.ipynb") not in available]
    if unknown:
        print(f"no notebook named {', '.join(unknown)}; the notebooks: {', '.join(n[:-6] for n in available)}",
              file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    import papermill

    failed = []
    for index, name in enumerate(names, start=1):
        source = HERE / (name if name.endswith(".ipynb") else f"{name}.ipynb")
        executed = args.out / source.name
        started = time.perf_counter()
        print(f"[{index}/{len(names)}] {source.name} on {lake} ...", file=sys.stderr, flush=True)
        parameters = {"lake": str(lake)} | ({"tenant": args.tenant} if args.tenant else {})
        try:
            papermill.execute_notebook(str(source), str(executed), parameters=parameters, kernel_name="python3",
                                       cwd=str(HERE), progress_bar=False)
            outcome = "ok"
        except Exception as exc:  # the notebook's own error: named below, the rest still run
            failed.append((source.name, str(exc).strip().splitlines()[-1] if str(exc).strip() else repr(exc)))
            outcome = "FAILED"
        if executed.exists():
            render_html(executed, executed.with_suffix(".html"))
        print(f"    {outcome} in {time.perf_counter() - started:.1f} s -> {executed.with_suffix('.html')}",
              file=sys.stderr, flush=True)
    for name, error in failed:
        print(f"{name} failed: {error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
