"""PBS Professional's job ``comment`` in words: the scheduler's and the server's own messages.

A queued job's ``comment`` (``qstat -f``) is the last word PBS wrote about it. The sentences here
are only for messages whose text and cause come from OpenPBS's source (commit cd7ab5e):

* ``src/scheduler/constant.h``: the prefixes ``Not Running`` (``NOT_RUN_PREFIX``: tried in this
  cycle, cannot start now) and ``Can Never Run`` (``NEVER_RUN_PREFIX``: cannot start as submitted);
* ``src/scheduler/job_info.cpp`` (``res_to_str``'s table of ``sched_error_code`` messages):
  ``Insufficient amount of resource: %s %s`` (``INSUFFICIENT_RESOURCE``; the second part is
  ``(R: requested A: available T: total)``, ``check.cpp``), its queue and server forms, ``Not
  enough free nodes available`` (``NO_FREE_NODES``), ``Not enough total nodes available``
  (``NO_TOTAL_NODES``), ``Job would break strict sorted order`` (``STRICT_ORDERING``), ``Job would
  conflict with reservation or top job`` (``RESERVATION_CONFLICT``), the run limits ``Server job
  limit reached for user %s``, ``Queue %s job limit reached for user %s`` and their group and
  project forms, and ``would exceed user %s's limit on resource %s in complex`` / ``in queue %s``;
* ``src/server/req_holdjob.c``: ``Job held by %s on %s`` (``qhold``: who held it, and when).

Any other comment is shown as PBS printed it, with no words of fairtop's.
"""

from __future__ import annotations

import re

from tui.analysis.jobs.reasons import Kind, Meaning

__all__ = ["describe_pbs"]

NOT_RUN, NEVER_RUN = "Not Running", "Can Never Run"

#: (pattern over the message after the prefix, kind, sentence, move); groups fill the sentence.
_MESSAGES: tuple[tuple[str, Kind, str, str], ...] = (
    (r"Insufficient amount of (?:(queue|server) )?resource: (\S+) \(R: (\S+) A: (\S+) T: (\S+)\)", "queue",
     "it asks for {3} {2}{scope}; {4} available now, {5} in total", "the jobs using {2} ending"),
    (r"Not enough free nodes available", "queue",
     "no node has the free resources it asks for now", "running jobs ending on the nodes it could use"),
    (r"Not enough total nodes available", "invalid",
     "the complex has fewer nodes than it asks for", "a smaller request (qalter), or more nodes"),
    (r"Job would break strict sorted order", "queue",
     "a job sorted ahead of it (strict_ordering) has not started yet, and PBS starts jobs in that order",
     "the jobs sorted ahead of it starting"),
    (r"Job would conflict with reservation or top job", "reservation",
     "starting it now would delay a reservation or a job the scheduler has planned ahead (a top job)",
     "the reservation or the top job starting, or a shorter walltime that fits before them"),
    (r"(Server|Queue (\S+)) job limit reached for (user|group|project) (\S+)", "limit",
     "{3} {4} already runs as many jobs as the {where} allows (max_run)", "some of those jobs ending"),
    (r"would exceed (user|group|project) (\S+)'s limit on resource (\S+) in (complex|queue (\S+))", "limit",
     "{1} {2}'s running jobs already use as much {3} as the {in_} allows (max_run_res)",
     "some of those jobs ending"),
)
_HELD = re.compile(r"Job held by (\S+) on (.+)")


def _format(sentence: str, m: re.Match[str]) -> str:
    groups = {str(i): g or "" for i, g in enumerate(m.groups(), 1)}
    scope = f" (the {m.group(1)}'s own {m.group(2)})" if sentence.startswith("it asks for") and m.group(1) else ""
    where = ""
    in_ = ""
    if "{where}" in sentence:
        where = "server" if m.group(1) == "Server" else f"queue {m.group(2)}"
    if "{in_}" in sentence:
        in_ = "complex (server)" if m.group(4) == "complex" else f"queue {m.group(5)}"
    return re.sub(r"\{(\w+)\}", lambda g: {"scope": scope, "where": where, "in_": in_}.get(g.group(1),
                                                                                          groups.get(g.group(1), "")),
                  sentence)


def describe_pbs(comment: str) -> Meaning:
    """What a queued job's PBS ``comment`` means: the ``code`` is the message as printed (without
    the ``Not Running:``/``Can Never Run:`` prefix), the ``detail`` the whole comment; kind
    ``unknown`` for a comment fairtop has no grounded sentence for."""
    text = comment.strip()
    held = _HELD.fullmatch(text)
    if held:
        return Meaning(text, "hold", f"{held.group(1)} held it (qhold) on {held.group(2)}",
                       "releasing it: qrls (by its owner for a user hold, or an operator/manager)", detail=text)
    prefix, _, rest = text.partition(": ")
    never = prefix == NEVER_RUN
    message = rest if prefix in (NOT_RUN, NEVER_RUN) else text
    for pattern, kind, sentence, move in _MESSAGES:
        m = re.fullmatch(pattern, message)
        if m is None:
            continue
        words = _format(sentence, m)
        if never:
            return Meaning(message, "invalid", f"the scheduler judged it can never run as submitted: {words}",
                           "a request the complex can satisfy (qalter), or more resources", detail=text)
        return Meaning(message, kind, words, _format(move, m), detail=text)
    if never:
        return Meaning(message, "invalid", "the scheduler judged it can never run as submitted",
                       "a request the complex can satisfy (qalter)", detail=text)
    return Meaning(text, "unknown", f"PBS says {text!r} (a comment fairtop does not know)", "", detail=text)
