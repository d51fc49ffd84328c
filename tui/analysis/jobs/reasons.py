"""Slurm's pending-job reasons in words: every code Slurm prints, what it means and what moves it.

The codes are Slurm's own (``job_state_reason_string()``: ``src/common/job_state_reason.c`` in
26.05, ``src/common/slurm_protocol_defs.c`` in 22.05; :data:`REASON_CODES` holds both releases'
lists). squeue's Reason is that code, or the controller's own description when it set one
(``ReqNodeNotAvail, UnavailableNodes:n1``; "Nodes required for job are DOWN, DRAINED or reserved
for jobs in higher priority partitions"). A code fairtop does not know is shown as printed.

:func:`describe` gives the general sentence of a code; :mod:`tui.analysis.jobs.explain` fills it
with the job's own numbers (the association's limit and use, its dependency, its begin time).
No Textual here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

__all__ = ["REASON_CODES", "IN_LINE", "Kind", "Meaning", "describe", "limit_parts", "LimitParts"]

#: Every reason code Slurm 26.05 (in its enum order) and 22.05 print, and the man page's
#: WaitingForScheduling.
REASON_CODES = (
    "None", "Prolog", "Priority", "Dependency", "Resources", "PartitionNodeLimit", "PartitionTimeLimit",
    "PartitionDown", "PartitionInactive", "JobHeldAdmin", "JobHeldUser", "NvidiaImexChannels", "BeginTime",
    "Licenses", "AssociationJobLimit", "AssociationResourceLimit", "AssociationTimeLimit", "Reservation",
    "ReqNodeNotAvail", "SchedDefer", "NodeDown", "BadConstraints", "SystemFailure", "JobLaunchFailure",
    "NonZeroExitCode", "RaisedSignal", "TimeLimit", "InactiveLimit", "InvalidAccount", "InvalidQOS",
    "QOSUsageThreshold", "QOSJobLimit", "QOSResourceLimit", "QOSTimeLimit", "Cleaning", "QOSNotAllowed",
    "AccountNotAllowed", "DependencyNeverSatisfied", "QOSGrpCpuLimit", "QOSGrpCPUMinutesLimit",
    "QOSGrpCPURunMinutesLimit", "QOSGrpJobsLimit", "QOSGrpMemLimit", "QOSGrpNodeLimit", "QOSGrpSubmitJobsLimit",
    "QOSGrpWallLimit", "QOSMaxCpuPerJobLimit", "QOSMaxCpuMinutesPerJobLimit", "QOSMaxNodePerJobLimit",
    "QOSMaxWallDurationPerJobLimit", "QOSMaxCpuPerUserLimit", "QOSMaxJobsPerUserLimit", "QOSMaxNodePerUserLimit",
    "QOSMaxSubmitJobPerUserLimit", "QOSMinCpuNotSatisfied", "AssocGrpCpuLimit", "AssocGrpCPUMinutesLimit",
    "AssocGrpCPURunMinutesLimit", "AssocGrpJobsLimit", "AssocGrpMemLimit", "AssocGrpNodeLimit",
    "AssocGrpSubmitJobsLimit", "AssocGrpWallLimit", "AssocMaxJobsLimit", "AssocMaxCpuPerJobLimit",
    "AssocMaxCpuMinutesPerJobLimit", "AssocMaxNodePerJobLimit", "AssocMaxWallDurationPerJobLimit",
    "AssocMaxSubmitJobLimit", "JobHoldMaxRequeue", "JobArrayTaskLimit", "BurstBufferResources",
    "BurstBufferStageIn", "BurstBufferOperation", "AssocGrpUnknown", "AssocGrpUnknownMinutes",
    "AssocGrpUnknownRunMinutes", "AssocMaxUnknownPerJob", "AssocMaxUnknownPerNode", "AssocMaxUnknownMinutesPerJob",
    "AssocMaxCpuPerNode", "AssocGrpMemMinutes", "AssocGrpMemRunMinutes", "AssocMaxMemPerJob", "AssocMaxMemPerNode",
    "AssocMaxMemMinutesPerJob", "AssocGrpNodeMinutes", "AssocGrpNodeRunMinutes", "AssocMaxNodeMinutesPerJob",
    "AssocGrpEnergy", "AssocGrpEnergyMinutes", "AssocGrpEnergyRunMinutes", "AssocMaxEnergyPerJob",
    "AssocMaxEnergyPerNode", "AssocMaxEnergyMinutesPerJob", "AssocGrpGRES", "AssocGrpGRESMinutes",
    "AssocGrpGRESRunMinutes", "AssocMaxGRESPerJob", "AssocMaxGRESPerNode", "AssocMaxGRESMinutesPerJob",
    "AssocGrpLicense", "AssocGrpLicenseMinutes", "AssocGrpLicenseRunMinutes", "AssocMaxLicensePerJob",
    "AssocMaxLicenseMinutesPerJob", "AssocGrpBB", "AssocGrpBBMinutes", "AssocGrpBBRunMinutes", "AssocMaxBBPerJob",
    "AssocMaxBBPerNode", "AssocMaxBBMinutesPerJob", "QOSGrpUnknown", "QOSGrpUnknownMinutes",
    "QOSGrpUnknownRunMinutes", "QOSMaxUnknownPerJob", "QOSMaxUnknownPerNode", "QOSMaxUnknownPerUser",
    "QOSMaxUnknownMinutesPerJob", "QOSMinUnknown", "QOSMaxCpuPerNode", "QOSGrpMemoryMinutes",
    "QOSGrpMemoryRunMinutes", "QOSMaxMemoryPerJob", "QOSMaxMemoryPerNode", "QOSMaxMemoryPerUser",
    "QOSMaxMemoryMinutesPerJob", "QOSMinMemory", "QOSGrpNodeMinutes", "QOSGrpNodeRunMinutes",
    "QOSMaxNodeMinutesPerJob", "QOSMinNode", "QOSGrpEnergy", "QOSGrpEnergyMinutes", "QOSGrpEnergyRunMinutes",
    "QOSMaxEnergyPerJob", "QOSMaxEnergyPerNode", "QOSMaxEnergyPerUser", "QOSMaxEnergyMinutesPerJob", "QOSMinEnergy",
    "QOSGrpGRES", "QOSGrpGRESMinutes", "QOSGrpGRESRunMinutes", "QOSMaxGRESPerJob", "QOSMaxGRESPerNode",
    "QOSMaxGRESPerUser", "QOSMaxGRESMinutesPerJob", "QOSMinGRES", "QOSGrpLicense", "QOSGrpLicenseMinutes",
    "QOSGrpLicenseRunMinutes", "QOSMaxLicensePerJob", "QOSMaxLicensePerUser", "QOSMaxLicenseMinutesPerJob",
    "QOSMinLicense", "QOSGrpBB", "QOSGrpBBMinutes", "QOSGrpBBRunMinutes", "QOSMaxBBPerJob", "QOSMaxBBPerNode",
    "QOSMaxBBPerUser", "QOSMinBB", "DeadLine", "MaxBBPerAccount", "MaxCpuPerAccount", "MaxEnergyPerAccount",
    "MaxGRESPerAccount", "MaxNodePerAccount", "MaxLicensePerAccount", "MaxMemoryPerAccount", "MaxUnknownPerAccount",
    "MaxJobsPerAccount", "MaxSubmitJobsPerAccount", "PartitionConfig", "AccountingPolicy", "FedJobLock",
    "OutOfMemory", "MaxMemPerLimit", "AssocGrpBilling", "AssocGrpBillingMinutes", "AssocGrpBillingRunMinutes",
    "AssocMaxBillingPerJob", "AssocMaxBillingPerNode", "AssocMaxBillingMinutesPerJob", "QOSGrpBilling",
    "QOSGrpBillingMinutes", "QOSGrpBillingRunMinutes", "QOSMaxBillingPerJob", "QOSMaxBillingPerNode",
    "QOSMaxBillingPerUser", "QOSMaxBillingMinutesPerJob", "MaxBillingPerAccount", "QOSMinBilling",
    "ReservationDeleted", "ReservationInvalid", "Constraints", "MaxBBRunMinsPerAccount",
    "MaxBillingRunMinsPerAccount", "MaxCpuRunMinsPerAccount", "MaxEnergyRunMinsPerAccount",
    "MaxGRESRunMinsPerAccount", "MaxNodeRunMinsPerAccount", "MaxLicenseRunMinsPerAccount",
    "MaxMemoryRunMinsPerAccount", "MaxUnknownRunMinsPerAccount", "MaxBBRunMinsPerUser", "MaxBillingRunMinsPerUser",
    "MaxCpuRunMinsPerUser", "MaxEnergyRunMinsPerUser", "MaxGRESRunMinsPerUser", "MaxNodeRunMinsPerUser",
    "MaxLicenseRunMinsPerUser", "MaxMemoryRunMinsPerUser", "MaxUnknownRunMinsPerUser", "MaxPoweredUpNodes",
    "MpiPortsBusy", "BlockFreeAction", "BlockMaxError", "FrontEndDown", "PowerNotAvail", "PowerReserved",
    "WaitingForScheduling",
)

Kind = Literal["queue", "hold", "dependency", "begin", "limit", "partition", "nodes", "reservation", "licenses",
               "invalid", "ended", "other", "unknown"]

#: Kinds of a job that waits its turn for resources: only these count as "ahead" of another job.
IN_LINE: frozenset[str] = frozenset({"queue"})

_ADMIN = "only an administrator can change that"
_RESUBMIT = "resubmit it (or ``scontrol update`` it) to fit, or ask the site to raise the limit"

#: code -> (kind, what it means, what moves it). Limit families are built by :func:`_limit_meaning`.
_PLAIN: dict[str, tuple[Kind, str, str]] = {
    "None": ("queue", "the scheduler has not looked at it yet (no reason set)",
             "nothing: the next scheduling pass gives it a place"),
    "WaitingForScheduling": ("queue", "the scheduler has not looked at it yet (no reason set)",
                             "nothing: the next scheduling pass gives it a place"),
    "Prolog": ("other", "it has its nodes and its prolog is running", "nothing: it starts when the prolog ends"),
    "Priority": ("queue", "jobs of higher priority wait for the same partition (or reservation) and go first",
                 "its priority rising above theirs (fairshare recovering, age), or the jobs ahead starting"),
    "Resources": ("queue", "it is next in line and waits for enough free resources (CPUs, memory, GPUs, nodes)",
                  "running jobs ending (or a smaller request, a shorter time limit for backfill)"),
    "Dependency": ("dependency", "it waits for a job it depends on", "the jobs it depends on reaching the state "
                   "its dependency asks for"),
    "DependencyNeverSatisfied": ("dependency", "its dependency can never be satisfied (a job it depends on ended "
                                 "the wrong way)", "nothing will: cancel it, or remove the dependency "
                                 "(``scontrol update jobid=ID dependency=``)"),
    "BeginTime": ("begin", "it was submitted with a begin time that has not come yet",
                  "its begin time coming (``scontrol update jobid=ID starttime=now`` to start sooner)"),
    "JobHeldUser": ("hold", "it is held by its user (``sbatch -H`` or ``scontrol hold``)",
                    "releasing it: ``scontrol release ID``"),
    "JobHeldAdmin": ("hold", "it is held by an administrator", "an administrator releasing it"),
    "JobHoldMaxRequeue": ("hold", "it was requeued more often than MaxBatchRequeue allows and is held",
                          "an administrator releasing it"),
    "PartitionDown": ("partition", "its partition is DOWN: it accepts jobs but starts none",
                      f"the partition coming back up ({_ADMIN}), or moving the job to another partition"),
    "PartitionInactive": ("partition", "its partition is INACTIVE: it neither accepts nor starts jobs",
                          f"the partition coming back ({_ADMIN}), or moving the job to another partition"),
    "PartitionNodeLimit": ("partition", "the number of nodes it asks for is outside its partition's limits "
                           "(MinNodes/MaxNodes), or the partition's nodes it needs are down or drained",
                           "fewer (or more) nodes, or another partition"),
    "PartitionTimeLimit": ("partition", "its time limit is longer than its partition's MaxTime",
                           "a shorter time limit (``scontrol update jobid=ID timelimit=...``), or another partition"),
    "PartitionConfig": ("partition", "it asks for something its partition's configuration does not allow",
                        "another partition, or a request that fits this one"),
    "ReqNodeNotAvail": ("nodes", "a node it needs is not available: down, drained, reserved or not responding",
                        f"those nodes returning ({_ADMIN}), or a request that does not name them"),
    "NodeDown": ("nodes", "a node it needs is down", f"the node returning ({_ADMIN})"),
    "BadConstraints": ("invalid", "its constraints (``-C``) cannot be satisfied by any node",
                       "resubmit with constraints some node has"),
    "Constraints": ("invalid", "its constraints cannot be satisfied now", "other constraints, or waiting"),
    "Reservation": ("reservation", "it waits for its advanced reservation to start", "the reservation starting"),
    "ReservationDeleted": ("reservation", "the reservation it asked for was deleted",
                           "resubmit without it, or in another reservation"),
    "ReservationInvalid": ("reservation", "the reservation it asked for is not valid for it",
                           "resubmit without it, or in a reservation it may use"),
    "Licenses": ("licenses", "it waits for licenses to be free", "other jobs releasing the licenses"),
    "SchedDefer": ("other", "the scheduler deferred it (SchedulerParameters=defer)",
                   "nothing: the next scheduling pass"),
    "Cleaning": ("other", "it is being requeued and its previous run is still cleaning up",
                 "nothing: the clean-up ending"),
    "InvalidAccount": ("invalid", "its account is not valid (it does not exist, or the user is not in it)",
                       "resubmit under an account you belong to"),
    "InvalidQOS": ("invalid", "its QOS is not valid", "resubmit with a QOS your association may use"),
    "QOSNotAllowed": ("invalid", "its association may not use its QOS", "resubmit with a QOS you may use"),
    "AccountNotAllowed": ("invalid", "its partition does not allow its account", "another partition or account"),
    "AssociationJobLimit": ("limit", "its association runs as many jobs as its limits allow",
                            "some of the association's jobs ending"),
    "AssociationResourceLimit": ("limit", "its association holds as much of some resource as its limits allow",
                                 "some of the association's jobs ending"),
    "AssociationTimeLimit": ("limit", "its association has used the time its limits allow",
                             "the limit being raised, or the usage decaying"),
    "QOSJobLimit": ("limit", "its QOS runs as many jobs as its limits allow", "some of the QOS's jobs ending"),
    "QOSResourceLimit": ("limit", "its QOS holds as much of some resource as its limits allow",
                         "some of the QOS's jobs ending"),
    "QOSTimeLimit": ("limit", "its QOS has used the time its limits allow",
                     "the limit being raised, or the usage decaying"),
    "QOSUsageThreshold": ("limit", "its association's fairshare is below its QOS's UsageThreshold",
                          "its fairshare recovering above the threshold"),
    "AccountingPolicy": ("limit", "an accounting limit holds it (the controller gives no detail)",
                         "the limit's usage falling, or the limit being raised"),
    "JobArrayTaskLimit": ("limit", "its job array runs as many tasks at once as its throttle (``%N``) allows",
                          "some of the array's running tasks ending (or ``scontrol update jobid=ID "
                          "arraytaskthrottle=N``)"),
    "MaxMemPerLimit": ("invalid", "it asks for more memory per CPU or node than MaxMemPerCPU/MaxMemPerNode allow",
                       _RESUBMIT),
    "AssocGrpJobsLimit": ("limit", "its association runs as many jobs at once as its GrpJobs allows",
                          "some of the association's running jobs ending, or a higher GrpJobs"),
    "AssocGrpSubmitJobsLimit": ("limit", "its association has as many jobs queued and running as its "
                                "GrpSubmitJobs allows", "some of the association's jobs ending"),
    "AssocMaxJobsLimit": ("limit", "its user runs as many jobs in the association at once as MaxJobs allows",
                          "one of those running jobs ending, or a higher MaxJobs"),
    "AssocMaxSubmitJobLimit": ("limit", "its user has as many jobs queued and running as MaxSubmitJobs allows",
                               "some of those jobs ending"),
    "QOSGrpJobsLimit": ("limit", "its QOS runs as many jobs at once as its GrpJobs allows",
                        "some of the QOS's running jobs ending"),
    "QOSGrpSubmitJobsLimit": ("limit", "its QOS has as many jobs queued and running as its GrpSubmitJobs allows",
                              "some of the QOS's jobs ending"),
    "QOSMaxJobsPerUserLimit": ("limit", "its user runs as many jobs in its QOS at once as the QOS's "
                               "MaxJobsPerUser allows", "one of those running jobs ending"),
    "QOSMaxSubmitJobPerUserLimit": ("limit", "its user has as many jobs in its QOS as MaxSubmitJobsPerUser allows",
                                    "some of those jobs ending"),
    "MaxJobsPerAccount": ("limit", "its account runs as many jobs in its QOS at once as the QOS's "
                          "MaxJobsPerAccount allows", "some of the account's running jobs in that QOS ending"),
    "MaxSubmitJobsPerAccount": ("limit", "its account has as many jobs in its QOS as MaxSubmitJobsPerAccount "
                                "allows", "some of those jobs ending"),
    "AssocGrpWallLimit": ("limit", "its association has used the wall-clock minutes its GrpWall allows",
                          "a higher GrpWall, or the usage decaying"),
    "QOSGrpWallLimit": ("limit", "its QOS has used the wall-clock minutes its GrpWall allows",
                        "a higher GrpWall, or the usage decaying"),
    "AssocMaxWallDurationPerJobLimit": ("invalid", "its time limit is longer than its association's MaxWall",
                                        "a shorter time limit (``scontrol update jobid=ID timelimit=...``)"),
    "QOSMaxWallDurationPerJobLimit": ("invalid", "its time limit is longer than its QOS's MaxWall",
                                      "a shorter time limit (``scontrol update jobid=ID timelimit=...``)"),
    "BurstBufferResources": ("other", "it waits for burst buffer space", "other jobs releasing burst buffer space"),
    "BurstBufferStageIn": ("other", "its burst buffer is staging in its files", "nothing: the stage-in ending"),
    "BurstBufferOperation": ("other", "a burst buffer operation for it failed", "see ``scontrol show job ID``"),
    "FedJobLock": ("other", "the federation has it locked while clusters agree where it runs",
                   "nothing: the clusters agreeing"),
    "DeadLine": ("ended", "its deadline passed before it could start", "nothing: resubmit"),
    "MaxPoweredUpNodes": ("nodes", "starting it would power up more nodes than the site allows "
                          "(MaxPoweredUpNodes)", "powered-up nodes freeing"),
    "MpiPortsBusy": ("other", "the MPI ports it needs are all in use", "other jobs releasing them"),
    "NvidiaImexChannels": ("other", "it waits for an NVIDIA IMEX channel", "other jobs releasing channels"),
    "PowerNotAvail": ("nodes", "not enough power is available to start it", "power becoming available"),
    "PowerReserved": ("nodes", "power is reserved for other jobs", "power becoming available"),
    "FrontEndDown": ("nodes", "no front end node is available", f"a front end returning ({_ADMIN})"),
    "BlockFreeAction": ("other", "an IBM BlueGene block is being freed", "nothing: the block freeing"),
    "BlockMaxError": ("other", "an IBM BlueGene block has too many cnodes in error", _ADMIN),
    "SystemFailure": ("ended", "a failure of Slurm, a file system or the network", "see the site's notice"),
    "JobLaunchFailure": ("ended", "it could not be launched (a file system, the program name...)",
                         "see ``scontrol show job ID``"),
    "NonZeroExitCode": ("ended", "it ended with a non-zero exit code", "nothing: it has ended"),
    "RaisedSignal": ("ended", "it ended on a signal", "nothing: it has ended"),
    "TimeLimit": ("ended", "it reached its time limit", "nothing: it has ended"),
    "InactiveLimit": ("ended", "it reached the system's InactiveLimit", "nothing: it has ended"),
    "OutOfMemory": ("ended", "it ran out of memory", "nothing: it has ended"),
}

#: The controller's own descriptions that squeue prints instead of a code, by their start.
_WORDS: tuple[tuple[str, str, Kind], ...] = (
    ("Nodes required for job are DOWN, DRAINED or reserved", "Resources", "queue"),
    ("Job is at or exceeds", "AccountingPolicy", "limit"),
)

_TRES_WORD = {"Cpu": "cpu", "CPU": "cpu", "Mem": "mem", "Memory": "mem", "Node": "node", "Energy": "energy",
              "GRES": "gres", "License": "license", "BB": "bb", "Billing": "billing", "Unknown": "unknown"}
_TRES = "|".join(sorted(_TRES_WORD, key=len, reverse=True))
_LIMIT = re.compile(rf"(Assoc|QOS)(Grp|Max|Min)({_TRES})(Minutes|RunMinutes|PerJob|PerNode|PerUser|MinutesPerJob|)"
                    r"(?:Limit|NotSatisfied)?")
_PER_ACCOUNT = re.compile(rf"Max({_TRES})(RunMins)?Per(Account|User)")


@dataclass(frozen=True)
class LimitParts:
    """A limit reason taken apart: ``AssocGrpBillingMinutes`` -> association, GrpTRESMins, billing."""

    scope: Literal["assoc", "qos"]
    limit: str
    """Slurm's name of the limit (``GrpTRES``, ``GrpTRESMins``, ``MaxTRESPerJob``, ``MaxTRESPerUser``...)."""
    tres: str
    """``cpu``, ``mem``, ``node``, ``energy``, ``billing``, ``gres``, ``license``, ``bb`` or ``unknown``."""


def limit_parts(code: str) -> LimitParts | None:
    """The scope, limit and TRES of a TRES-limit reason code; None for any other code."""
    m = _LIMIT.fullmatch(code)
    if m:
        scope, bound, tres, span = m.groups()
        name = {("Grp", ""): "GrpTRES", ("Grp", "Minutes"): "GrpTRESMins", ("Grp", "RunMinutes"): "GrpTRESRunMins",
                ("Max", "PerJob"): "MaxTRESPerJob", ("Max", "PerNode"): "MaxTRESPerNode",
                ("Max", "MinutesPerJob"): "MaxTRESMinsPerJob", ("Max", "PerUser"): "MaxTRESPerUser",
                ("Min", ""): "MinTRESPerJob"}.get((bound, span))
        if name is None:
            return None
        return LimitParts("assoc" if scope == "Assoc" else "qos", name, _TRES_WORD[tres])
    m = _PER_ACCOUNT.fullmatch(code)
    if m:
        tres, run, per = m.groups()
        return LimitParts("qos", f"MaxTRES{'RunMins' if run else ''}Per{per}", _TRES_WORD[tres])
    return None


@dataclass(frozen=True)
class Meaning:
    """What a printed reason means, in general (before the job's own numbers go in)."""

    code: str
    """The reason code (``Priority``); for the controller's own words, the code they stand for."""
    kind: Kind
    sentence: str
    """What it means, completing "It waits because ..."."""
    move: str
    """What would move it, completing "It would move with ..."."""
    detail: str = ""
    """What squeue printed after the code (``UnavailableNodes:n1``), or the controller's words."""
    limit: LimitParts | None = None


def _limit_meaning(code: str, parts: LimitParts) -> Meaning:
    who = "its association" if parts.scope == "assoc" else "its QOS"
    tres, name = parts.tres, parts.limit
    if name == "GrpTRES":
        text = f"{who} already has as much {tres} in use by running jobs as its {name} allows"
        move = f"some of those running jobs ending, or a higher {name}"
    elif name == "GrpTRESMins":
        text = f"{who}'s {tres}-minutes budget ({name}) is spent"
        move = f"a top-up (a higher {name}), or its usage decaying below the limit"
    elif name in ("GrpTRESRunMins", "MaxTRESRunMinsPerAccount", "MaxTRESRunMinsPerUser"):
        text = f"the running jobs of {who} have committed as many {tres}-minutes (time left x {tres}) as {name} allows"
        move = "those jobs running down (each minute they run frees some)"
    elif name in ("MaxTRESPerUser", "MaxTRESPerAccount"):
        whose = "its user's" if name.endswith("User") else "its account's"
        text = f"{whose} running jobs in {who} already hold as much {tres} as the QOS's {name} allows"
        move = "some of those running jobs ending"
    elif name == "MinTRESPerJob":
        text = f"it asks for less {tres} than {who}'s {name} requires"
        move = _RESUBMIT
    else:  # MaxTRESPerJob, MaxTRESPerNode, MaxTRESMinsPerJob: the job itself is too big
        what = {"MaxTRESPerNode": f"{tres} per node", "MaxTRESMinsPerJob": f"{tres}-minutes (x its time limit)"}
        text = f"it asks for more {what.get(name, tres)} than {who}'s {name} allows one job"
        move = _RESUBMIT
    return Meaning(code, "limit", text, move, limit=parts)


def describe(printed: str) -> Meaning:
    """What squeue's Reason cell means: a known code, a code with details after it
    (``ReqNodeNotAvail, UnavailableNodes:n1``), one of the controller's known descriptions, or
    (kind ``unknown``) a reason fairtop does not know, shown as printed."""
    text = printed.strip()
    for start, code, kind in _WORDS:
        if text.startswith(start):
            meaning = describe(code)
            return Meaning(code, kind, meaning.sentence, meaning.move, detail=text)
    m = re.fullmatch(r"([^,:]*)[,:]?(.*)", text, re.S)
    assert m is not None  # the pattern matches any text
    code, detail = m.group(1).strip(), m.group(2).strip()
    known = _CASELESS.get(code.lower())
    if known is None:
        return Meaning(text, "unknown", f"Slurm says {text!r} (a reason fairtop does not know)", "", detail="")
    if known in _PLAIN:
        kind, sentence, move = _PLAIN[known]
        return Meaning(known, kind, sentence, move, detail=detail)
    parts = limit_parts(known)
    assert parts is not None  # every code of REASON_CODES is plain or a limit (tests hold that)
    return replace(_limit_meaning(known, parts), detail=detail)


#: Slurm matches reason names without regard to case (``job_state_reason_num``).
_CASELESS = {code.lower(): code for code in REASON_CODES if code in _PLAIN or limit_parts(code) is not None}
