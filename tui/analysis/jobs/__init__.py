"""Why a pending job waits (issue 35), without the UI: one room, this face.

* :func:`explain_pending` -> one :class:`PendingJob` per pending job of the standing's user: Slurm's
  reason in words with the job's own numbers (:mod:`~tui.analysis.jobs.reasons` knows every code
  Slurm prints), its place in its partition (:class:`Queue`, vectorised for 100,000 jobs), its
  sprio parts against the job just ahead, the scheduler's start estimate, and what would move it;
* :func:`jobs_view`: the Jobs pane's table and details for one user (:mod:`~tui.analysis.jobs.view`);
* :func:`pending_summary`: the summary line's part ("1 pending job: 37th in burn, held back by
  fairshare; the scheduler estimates 14:20").

No Textual here.
"""

from __future__ import annotations

from tui.analysis.jobs.explain import FactorGap, PendingJob, explain_pending, hidden_jobs, pending_summary
from tui.analysis.jobs.queue import Queue, QueuePlace
from tui.analysis.jobs.reasons import REASON_CODES, Meaning, describe
from tui.analysis.jobs.view import JobsView, jobs_lacks, jobs_user, jobs_view

__all__ = ["REASON_CODES", "FactorGap", "JobsView", "Meaning", "PendingJob", "Queue", "QueuePlace", "describe",
           "explain_pending", "hidden_jobs", "jobs_lacks", "jobs_user", "jobs_view", "pending_summary"]
