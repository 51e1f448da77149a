"""How many threads the models' matrix work takes (text/models.py ``model_threads``): the
process's OMP_NUM_THREADS when it names a positive count, else the cores up to 4."""

from __future__ import annotations

import os

import pytest

from memory_lake.text.models import model_threads


@pytest.mark.parametrize("value, expected", [("1", 1), ("3", 3), ("", None), ("0", None), ("many", None)])
def test_omp_num_threads_decides_when_it_names_a_count(monkeypatch, value, expected):
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert model_threads() == (expected or min(os.cpu_count() or 1, 4))
