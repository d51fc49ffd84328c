"""The ledger's records as the service answers them and the client reads them (frozen
dataclasses; the service's OpenAPI response schemas are generated from these too). Amounts are
integer resource-minutes; dates ``YYYY-MM-DD``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["ProjectRecord", "AllocationRecord", "JobRecord", "FailureRecord", "build"]


def build(cls: type, data: Mapping[str, Any]) -> Any:
    """``cls`` from a JSON object, ignoring keys it does not know (newer services add some)."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class ProjectRecord:
    id: int
    name: str
    gid: int
    account: str


@dataclass(frozen=True)
class AllocationRecord:
    id: int
    project: int
    project_name: str
    gid: int
    account: str
    resource: str
    category: str
    start: str
    end: str
    credits: int
    predebits: int
    debits: int
    balance: int
    failures: int = 0
    debits_by_uid: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class JobRecord:
    job_id: str
    alloc_id: int
    uid: int
    gid: int
    minutes: int
    status: str
    actual: int | None = None
    billed: int | None = None
    created: str = ""
    resolved: str | None = None
    balance: int | None = None


@dataclass(frozen=True)
class FailureRecord:
    id: int
    job_id: str
    alloc_id: int
    uid: int
    gid: int
    minutes: int
    balance: int
    created: str
