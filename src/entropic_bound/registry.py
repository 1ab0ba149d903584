"""Name → object registries, after lm-evaluation-harness's ``api/registry.py``.

A failed lookup says ``Unknown task 'x'. Available: a, b, c.`` with a did-you-mean.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from .errors import UnknownNameError, did_you_mean

T = TypeVar("T")


class Registry(Generic[T]):
    """A named collection of objects of one kind (tasks, students, estimators, experiments)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._summaries: dict[str, str] = {}

    def register(self, name: str | None = None, *, summary: str = "") -> Callable[[T], T]:
        """Register under ``name``, or the object's own ``name`` attribute when none is given."""

        def decorator(obj: T) -> T:
            key = name if name is not None else obj.name
            if key in self._items:
                raise ValueError(f"{self.kind} '{key}' is already registered")
            self._items[key] = obj
            self._summaries[key] = summary or (getattr(obj, "__doc__", "") or "").strip().split("\n")[0]
            return obj

        return decorator

    def get(self, name: str) -> T:
        if name not in self._items:
            available = ", ".join(sorted(self._items)) or "(none)"
            raise UnknownNameError(
                f"Unknown {self.kind} '{name}'. Available: {available}.{did_you_mean(name, self._items)}"
            )
        return self._items[name]

    def build(self, name: str, *args, **kwargs):
        """``name``'s entry called with ``args`` and the keyword arguments it accepts.

        An entry that declares ``accepts`` (a tuple of keyword names, as every student does) gets
        only those of ``kwargs``, so one call builds any entry from the same settings (``temperature``
        reaches B2 and B3, not B1); an entry without ``accepts`` (a task dataclass) gets them all.
        """
        obj = self.get(name)
        accepts = getattr(obj, "accepts", None)
        if accepts is not None:
            kwargs = {k: v for k, v in kwargs.items() if k in accepts}
        return obj(*args, **kwargs)

    def summary(self, name: str) -> str:
        self.get(name)
        return self._summaries[name]

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._items)


TASKS: Registry = Registry("task")
STUDENTS: Registry = Registry("student")
ESTIMATORS: Registry = Registry("estimator")
EXPERIMENTS: Registry = Registry("experiment")
