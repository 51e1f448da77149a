"""The report's "Over time" section on its own: a chart needs two runs, and a lake of many tenants
draws the largest twelve (a thousand tenants must not make a page nobody reads, nor a run that
spends minutes drawing it)."""

from __future__ import annotations

import re

from memory_lake.observe.trends import trends_section


def rows(total: int, nights: int = 3) -> list[dict]:
    return [{"as_of": f"2026-12-{d:02d}T00:00:00Z", "run_id": f"r{d}", "total": total, "working_used": d * total}
            for d in range(1, nights + 1)]


def test_the_largest_twelve_tenants_get_their_own_charts():
    health = {"overall": rows(100), "tenants": {f"t{i:02d}": rows(i) for i in range(15)}}
    page = trends_section(health, [], 30)
    shown = re.findall(r'<summary>Tenant <b>([^<]*)</b></summary>', page)
    assert shown == [f"t{i:02d}" for i in range(14, 2, -1)]
    assert "the 12 largest of 15 tenants" in page
    # each shown tenant's capacity chart carries its numbers
    (table,) = re.findall(r'<table class="series" data-chart="capacity:t14">.*?</table>', page, re.S)
    assert re.findall(r'data-column="working_used" data-value="([^"]*)"', table) == ["14", "28", "42"]


def test_one_run_is_a_sentence_not_a_chart():
    health = {"overall": rows(5, nights=1), "tenants": {}}
    page = trends_section(health, [{"as_of": "2026-12-01T00:00:00Z", "run_id": "r1", "steps": {"dedup": 1.5}}], 30)
    assert "<svg" not in page
    figures = dict(re.findall(r'<figure class="trend" data-chart="([^"]*)">(.*?)</figure>', page, re.S))
    said = {name: re.search(r"A line needs two runs with a value: (\d) so far", body).group(1)
            for name, body in figures.items()}
    # one snapshot with memories and one run with a step's seconds; nothing else has a value yet
    assert said == {"capacity": "1", "utilization": "0", "hit_rate": "0", "staleness": "0", "quarantine": "0",
                    "conflicts": "0", "summary_quality": "0", "ingest": "0", "merges": "0", "moves": "0",
                    "durations": "1"}


def altair_chart(points: dict, y_title: str, percent: bool, rule):
    """The chart as trends.py built it with Altair's classes before it wrote the spec out itself
    (`_spec`): the reference the spec must equal, key for key and in order."""
    import altair as alt

    from memory_lake.observe.trends import _COLOURS

    records = [{"run": x, "series": label, "value": values[i]}
               for column, label, values in points["series"] for i, x in enumerate(points["x"])
               if values[i] is not None]
    order = [label for _, label, _ in points["series"]]
    fmt = ".0%" if percent else "~s"
    base = alt.Chart(alt.Data(values=records)).encode(
        x=alt.X("run:O", sort=points["x"], title=None, axis=alt.Axis(labelAngle=-45)),
        y=alt.Y("value:Q", title=y_title, axis=alt.Axis(format=fmt, tickMinStep=0.01 if percent else 1)),
        color=alt.Color("series:N", sort=order, title=None, scale=alt.Scale(domain=order, range=_COLOURS[:len(order)]),
                        legend=alt.Legend(orient="bottom", columns=3)),
        tooltip=[alt.Tooltip("run:O", title="run"), alt.Tooltip("series:N"),
                 alt.Tooltip("value:Q", format=".1%" if percent else ",")],
    )
    layers = [base.mark_line(point=alt.OverlayMarkDef(size=28), strokeWidth=2)]
    if rule is not None:
        layers.append(alt.Chart(alt.Data(values=[{"y": rule[0], "label": rule[1]}])).mark_rule(
            strokeDash=[4, 3], color="#9ca3af").encode(y="y:Q"))
    return alt.layer(*layers).properties(width=330, height=170).configure(
        font="sans-serif", background="white").configure_view(stroke=None)


def test_each_chart_spec_is_the_one_altair_writes_and_draws_the_same_svg():
    import json

    import vl_convert

    from memory_lake.observe.trends import HEALTH_CHARTS, RUN_CHARTS, _labels, _spec

    instants = [f"2026-12-{d:02d}T00:00:00Z" for d in range(1, 15)] + ["2026-12-14T00:00:00Z", "2026-12-14T06:30:00Z"]
    x = _labels(instants)
    values = [None, 0, 1, 7, 12.5, 0.333333, 1e-07, 1234567, 3, None, 0.85, 2, 2, 40, 41.0, 0.5]
    shapes = [(series, percent, rule) for _, _, _, series, percent, rule in HEALTH_CHARTS] + [
        (series, False, None) for _, _, _, series in RUN_CHARTS] + [
        ([(f"c{i}", f"séries {i} «quoted»") for i in range(9)], False, (3.0, "limit & more"))]
    for n, (series, percent, rule) in enumerate(shapes):
        points = {"x": x, "as_of": instants, "run_id": [None] * len(x),
                  "series": [(c, label, values[k:] + values[:k]) for k, (c, label) in enumerate(series)]}
        spec = _spec(points, f"axis {n} 轴", percent, rule)
        reference = altair_chart(points, f"axis {n} 轴", percent, rule).to_dict()
        assert json.dumps(spec) == json.dumps(reference), series
        if n in (1, 8):  # with a threshold line and without: the same picture
            assert vl_convert.vegalite_to_svg(spec) == vl_convert.vegalite_to_svg(reference)
