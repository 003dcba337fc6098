"""One error tree for the whole tool, translated from third-party errors at the edges.

::

    R2actError
    ├── ManifestError          a campaign manifest is malformed (exit 2)
    ├── DataError              a predictions file, run directory or dataset is unusable (exit 2)
    ├── SafetyError            r2act refuses to touch a target that was not opted in (exit 2)
    └── ClusterError           the cluster misbehaved
        ├── TransientClusterError   retry may help (429, 5xx, connection reset)
        └── PermanentClusterError   retry will not help
            ├── NotFoundError       the object does not exist (404)
            └── ConflictError       the object already exists or changed (409)
                └── ForeignObjectError  the object is not this run's: never deleted

The CLI prints any ``R2actError`` as one line (its ``str``) and exits with ``exit_code``;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class R2actError(Exception):
    """Root of every error r2act raises on purpose."""

    exit_code: int = 1


class ManifestError(R2actError):
    """A campaign manifest cannot be used; the message names file, line, field and fix."""

    exit_code = 2


class DataError(R2actError):
    """Input data (predictions, run directory, dataset) cannot be used at all."""

    exit_code = 2


class SafetyError(R2actError):
    """The target was not explicitly opted in, or an action would leave the allowed scope."""

    exit_code = 2


class ClusterError(R2actError):
    """The cluster (real or simulated) did not do what was asked."""

    exit_code = 1


class TransientClusterError(ClusterError):
    """A failure that a bounded retry with backoff may overcome."""


class PermanentClusterError(ClusterError):
    """A failure that retrying will not fix; it fails the incident, not the campaign."""


class NotFoundError(PermanentClusterError):
    """The object asked for does not exist."""


class ConflictError(PermanentClusterError):
    """The object already exists, or changed under us."""


class ForeignObjectError(ConflictError):
    """An object with the name asked for exists but r2act (this run) did not create it.

    Raised instead of deleting it; for the caller it means *its* object is not there.
    """
