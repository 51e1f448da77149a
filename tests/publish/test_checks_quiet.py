"""The publish suite is quiet (issue 19, found by mutation testing): Great Expectations would log
thousands of DEBUG and INFO records per validation into a nightly run's log; `validate` keeps its
loggers at WARNING and leaves every other logger, the root included, as it was."""

from __future__ import annotations

import logging

from memory_lake.publish.checks import validate

from .test_checks import frames


def test_validation_logs_nothing_below_warning_and_touches_no_other_logger(caplog):
    caplog.set_level(logging.DEBUG)  # the root logger and its handler take everything
    ours = logging.getLogger("memory_lake.test")
    ours.setLevel(logging.DEBUG)
    assert validate(frames()).success
    noisy = [(r.name, r.levelname) for r in caplog.records if r.levelno < logging.WARNING]
    assert noisy == []
    assert (logging.getLogger().level, ours.level) == (logging.DEBUG, logging.DEBUG)
    assert all(logging.getLogger(name).level == logging.WARNING
               for name in logging.root.manager.loggerDict if name.startswith("great_expectations")
               and isinstance(logging.root.manager.loggerDict[name], logging.Logger)
               and logging.root.manager.loggerDict[name].level != logging.NOTSET)


def test_validation_prints_nothing(capfd):
    """No progress bars on stderr from inside a nightly run, nothing on stdout."""
    assert validate(frames()).success
    assert capfd.readouterr() == ("", "")
