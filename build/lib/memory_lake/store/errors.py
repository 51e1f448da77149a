"""Errors that the CLI turns into one clear line and a non-zero exit code."""


class MemoryLakeError(Exception):
    """Base class: an expected failure with a message meant for the user."""

    exit_code = 1


class LakeBusy(MemoryLakeError):
    """Another process holds the lake's write lock (or nothing is published to read from)."""

    exit_code = 3


class InputError(MemoryLakeError):
    """A path, option or value given by the user cannot be used."""

    exit_code = 2


class LakeNotFound(InputError):
    """The path holds no lake (only `init`, `demo` and ``Lake.init`` create one)."""


class NotApplicable(InputError):
    """A decision the lake's state refuses for good (an unknown id, a conflict already resolved, a
    forgotten memory): a queued one is moved to ``inbox/decisions/failed/``, never retried."""
