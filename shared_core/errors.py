"""Every error temporal-rag raises on purpose.

Each error inherits :class:`TemporalRagError` (catch everything of ours) and the closest builtin
(catch it the way you would catch the standard-library equivalent)::

    TemporalRagError(Exception)
    ├── InvalidInputError(ValueError)          bad input: names field and fix; nothing written
    │   └── InvalidInputTypeError(TypeError)   input of the wrong type (k="3", add(123))
    ├── FactNotFoundError(LookupError)         an unknown fact id
    ├── NothingToRetractError(LookupError)     a retraction that matches no valid version
    ├── InvalidOperationError(ValueError)      a valid request the ledger's state forbids
    │   ├── CardinalityConflictError           re-declaring a relation that already holds facts
    │   ├── FactIdConflictError                an id already used by a different statement
    │   └── NotRetiredError                    unretire of a fact that a newer fact superseded
    ├── MissingDependencyError(ImportError)    an optional extra is not installed; names it
    ├── ModelNotFoundError(LookupError)        a model is not on disk or in the local cache
    ├── DetectorError(RuntimeError)            a conflict detector's model or LLM call failed
    ├── EmbedderError(RuntimeError)            an embedder failed or returned malformed vectors
    ├── ExtractorError(RuntimeError)           an extractor's or expander's LLM call failed
    ├── LLMError(RuntimeError)                 a local LLM could not load its model or answer
    ├── NeedsAsyncError(RuntimeError)          an async-only LLM reached from sync code in a loop
    ├── NotPicklableError(TypeError)           an object over open storage; names the fix
    ├── FolderInUseError(BlockingIOError)      another process holds an embedded folder
    ├── EmbedderMismatchError(ValueError)      an index built by another embedder / dimension
    ├── VectorIndexError(RuntimeError)         the vector index's storage failed
    │   └── IndexSyncError                     the ledger committed a write the index lacks yet
    └── LedgerError(RuntimeError)              the storage itself
        ├── LedgerNotFoundError(FileNotFoundError)   no ledger there (create=False)
        ├── NotALedgerError(ValueError)        the file is not a temporal-rag ledger
        ├── SchemaVersionError                 written by a newer temporal-rag
        ├── LedgerCorruptError                 the file is damaged
        ├── LedgerBusyError(TimeoutError)      other writers held the lock past the retries
        └── LedgerUnavailableError(ConnectionError)  the ledger's server cannot be reached

Foreign errors (sqlite3, psycopg, ...) are translated where they cross into this library, with the
original kept as ``__cause__``.
"""

from __future__ import annotations

import errno


class TemporalRagError(Exception):
    """Base class of every error raised by temporal-rag."""


class InvalidInputError(TemporalRagError, ValueError):
    """Input that cannot be accepted; ``field`` names it and ``fix`` says what to do instead."""

    def __init__(self, field: str, problem: str, fix: str) -> None:
        self.field = field
        self.problem = problem
        self.fix = fix
        super().__init__(f"{field}: {problem}; fix: {fix}")

    def at(self, prefix: str) -> InvalidInputError:
        """The same error with its field qualified, e.g. ``facts[3].valid_from``."""
        error = type(self)(f"{prefix}.{self.field}", self.problem, self.fix)
        error.__cause__ = self.__cause__
        return error


class InvalidInputTypeError(InvalidInputError, TypeError):
    """Input of the wrong type (``k="3"``, ``add(123)``, ``metadata=["a"]``): a ``TypeError``
    as well, for code that catches the builtin a wrong type raises."""


class FactNotFoundError(TemporalRagError, LookupError):
    """No statement or version with this fact id exists in the ledger."""

    def __init__(self, fact_id: str) -> None:
        self.fact_id = fact_id
        super().__init__(f"no fact with id {fact_id!r} in this ledger")

    def __str__(self) -> str:  # LookupError subclasses would otherwise quote the message
        return str(self.args[0])


class NothingToRetractError(TemporalRagError, LookupError):
    """A retraction named a value that is not valid at the retraction time."""

    def __str__(self) -> str:
        return str(self.args[0])


class InvalidOperationError(TemporalRagError, ValueError):
    """A well-formed request that the current state of the ledger does not allow."""


class CardinalityConflictError(InvalidOperationError):
    """A relation's cardinality cannot change once facts with that relation are stored."""


class FactIdConflictError(InvalidOperationError):
    """The fact id is already used by a statement with different content."""


class NotRetiredError(InvalidOperationError):
    """``unretire`` was asked to restore a fact that was not retired by an undoable action."""


class MissingDependencyError(TemporalRagError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""


class ModelNotFoundError(TemporalRagError, LookupError):
    """A model could not be loaded from local files or the local cache (nothing is downloaded)."""

    def __str__(self) -> str:
        return str(self.args[0])


class DetectorError(TemporalRagError, RuntimeError):
    """A conflict detector could not reach a verdict (its model or LLM call failed)."""


class EmbedderError(TemporalRagError, RuntimeError):
    """An embedder failed, or returned vectors of the wrong number or dimension."""


class ExtractorError(TemporalRagError, RuntimeError):
    """An extractor or query expander could not run (its model or LLM call failed)."""


class LLMError(TemporalRagError, RuntimeError):
    """A local LLM (:class:`~shared_core.llms.LocalLLM`) could not load its model or answer."""


class NeedsAsyncError(TemporalRagError, RuntimeError):
    """A sync method met an async-only LLM callable while an event loop runs in this thread.

    Blocking that loop on the coroutine could deadlock it, and another loop would break clients
    bound to this one, so nothing is run; the message names the async method to await instead.
    """


class NotPicklableError(TemporalRagError, TypeError):
    """An object that holds open storage (or a part that cannot be copied) was pickled.

    ``what`` names the object, ``problem`` why it cannot travel, ``fix`` how to rebuild it.
    """

    def __init__(self, what: str, problem: str, fix: str) -> None:
        self.what = what
        self.problem = problem
        self.fix = fix
        super().__init__(f"{what} cannot be pickled: {problem}; fix: {fix}")


class FolderInUseError(TemporalRagError, BlockingIOError):
    """Another process has the embedded folder open (``TemporalMemory.open``): one process at a
    time may, enforced by an operating-system lock that dies with its holder.

    ``folder`` is the folder, ``holder`` the process id the lock file names (None: unknown).
    """

    def __init__(self, folder: str, holder: int | None) -> None:
        self.folder = folder
        self.holder = holder
        who = "another process" if holder is None else f"process {holder}"
        super().__init__(
            errno.EWOULDBLOCK,
            f"{folder} is open in {who}: one process at a time may open an embedded folder; "
            "fix: close the memory in that process (or stop it), or, for several workers, "
            "share a PostgreSQL ledger and a Chroma server: TemporalMemory.connect("
            "ledger='postgresql://user@host:5432/db', index='http://host:8000')",
        )

    def __str__(self) -> str:  # OSError would prefix "[Errno 11]"
        return str(self.strerror)


class EmbedderMismatchError(TemporalRagError, ValueError):
    """The vector index was built by another embedder (name or dimension); nothing was changed."""


class VectorIndexError(TemporalRagError, RuntimeError):
    """A failure of the vector index's storage (Chroma or another backend)."""


class IndexSyncError(VectorIndexError):
    """The ledger committed a write that the index could not take yet.

    The write is not lost: the ledger is the source of truth, and ``reconcile()`` (which also
    runs before the next search and on open) brings the index up to date.
    """


class LedgerError(TemporalRagError, RuntimeError):
    """A failure of the ledger's storage."""


class LedgerNotFoundError(LedgerError, FileNotFoundError):
    """There is no ledger at the path, and the caller asked not to create one."""

    def __str__(self) -> str:
        return str(self.args[0])


class NotALedgerError(LedgerError, ValueError):
    """The path exists but does not hold a temporal-rag ledger (nothing in it was changed)."""


class SchemaVersionError(LedgerError):
    """The ledger was written by a newer temporal-rag whose schema this version cannot read."""


class LedgerCorruptError(LedgerError):
    """The ledger file is damaged (truncated, overwritten or otherwise malformed)."""


class LedgerBusyError(LedgerError, TimeoutError):
    """Other writers held the ledger's lock for longer than the configured retries allow."""


class LedgerUnavailableError(LedgerError, ConnectionError):
    """The ledger's server refused or lost the connection; the failed call kept nothing."""


__all__ = [
    "CardinalityConflictError",
    "DetectorError",
    "EmbedderError",
    "EmbedderMismatchError",
    "ExtractorError",
    "FactIdConflictError",
    "FactNotFoundError",
    "FolderInUseError",
    "IndexSyncError",
    "InvalidInputError",
    "InvalidInputTypeError",
    "InvalidOperationError",
    "LLMError",
    "LedgerBusyError",
    "LedgerCorruptError",
    "LedgerError",
    "LedgerNotFoundError",
    "LedgerUnavailableError",
    "MissingDependencyError",
    "ModelNotFoundError",
    "NeedsAsyncError",
    "NotALedgerError",
    "NotPicklableError",
    "NotRetiredError",
    "NothingToRetractError",
    "SchemaVersionError",
    "TemporalRagError",
    "VectorIndexError",
]
