"""The Slurm hooks' reading of real Slurm 22.05 output (the end-to-end run is tests/sandbox/)."""

from __future__ import annotations

import pytest

from tui.allocations import slurm_hooks as hooks

#: ``scontrol show job -o 6`` on the sandbox: ``sbatch -A ftchem -n 1 -c 1 -t 5 --wrap "sleep 3"``.
SCONTROL = (
    "JobId=6 JobName=wrap UserId=ftalloc(2278) GroupId=ftalloc(2278) MCS_label=N/A Priority=6666 Nice=0 "
    "Account=ftchem QOS=normal JobState=COMPLETED Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 "
    "Reboot=0 ExitCode=0:0 RunTime=00:00:05 TimeLimit=00:05:00 TimeMin=N/A SubmitTime=2026-11-22T22:53:08 "
    "EligibleTime=2026-11-22T22:53:08 AccrueTime=2026-11-22T22:53:08 StartTime=2026-11-22T22:53:08 "
    "EndTime=2026-11-22T22:53:13 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-22T22:53:08 "
    "Scheduler=Main Partition=debug AllocNode:Sid=localhost:21946 ReqNodeList=(null) ExcNodeList=(null) "
    "NodeList=alloc-node BatchHost=alloc-node NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
    "TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 "
    "MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) "
    "Network=(null) Command=(null) WorkDir=/tmp StdErr=/dev/null StdIn=/dev/null StdOut=/dev/null Power=\n"
)


def test_a_job_from_scontrol() -> None:
    job = hooks.parse_job(SCONTROL)
    assert job == hooks.HookJob("6", 2278, 2278, "ftchem", cpus=1, gpus=0, time_limit_min=5, run_seconds=5,
                                state="COMPLETED", exit_code="0:0", reason="None")
    assert (hooks.requested_minutes(job), hooks.actual_minutes(job)) == (5, 1)  # 5 s of 1 CPU: rounded up
    assert hooks.ledger_state(job) == "completed"


def test_gpu_jobs_count_gpu_minutes() -> None:
    text = SCONTROL.replace("NumCPUs=1", "NumCPUs=8").replace("TRES=cpu=1,node=1,billing=1",
                                                             "TRES=cpu=8,node=1,billing=8,gres/gpu=2")
    job = hooks.parse_job(text.replace("RunTime=00:00:05", "RunTime=01:00:01"))
    assert (job.resource, job.units, hooks.requested_minutes(job), hooks.actual_minutes(job)) == ("gpu", 2, 10, 121)


@pytest.mark.parametrize("state, reason, code, expected", [
    ("COMPLETING", "None", "0:0", "completed"),
    ("COMPLETING", "NodeDown", "0:0", "node_fail"),
    ("COMPLETING", "None", "0:15", "cancelled"),  # killed by SIGTERM: scancel or the time limit
    ("COMPLETING", "NonZeroExitCode", "1:0", "failed"),
    ("NODE_FAIL", "NodeDown", "0:0", "node_fail"),
    ("TIMEOUT", "TimeLimit", "0:1", "failed"),
])
def test_end_states(state: str, reason: str, code: str, expected: str) -> None:
    job = hooks.HookJob("1", 1, 1, "a", 1, 0, 5, state=state, reason=reason, exit_code=code)
    assert hooks.ledger_state(job) == expected


def test_a_job_without_a_time_limit_is_refused() -> None:
    job = hooks.parse_job(SCONTROL.replace("TimeLimit=00:05:00", "TimeLimit=UNLIMITED"))
    with pytest.raises(hooks.Refused, match="no time limit"):
        hooks.requested_minutes(job)


def test_submitted_job_from_cli_filter_options() -> None:
    # what cli_filter/lua's options table held for `sbatch -A chem -n 1 -c 2 -t 3` (Slurm 22.05)
    options = {"account": "chem", "time": "00:03:00", "ntasks": "1", "cpus-per-task": "2", "nodes": "1-0",
               "partition": "debug"}
    job = hooks.submitted_job(options, 1009, 1009)
    assert (job.account, job.cpus, job.time_limit_min, hooks.requested_minutes(job)) == ("chem", 2, 3, 6)
    gpu = hooks.submitted_job({**options, "gres": "gpu:a100:2"}, 1009, 1009)
    assert (gpu.resource, hooks.requested_minutes(gpu)) == ("gpu", 6)


def test_no_time_limit_is_the_partitions_never_no_val() -> None:
    """What a job step's options held on 22.05 (srun inside a job: NO_VAL minutes) and an sbatch
    without -t: judged by the partition's DefaultTime, else MaxTime, never as 4,294,967,294 min."""
    step = {"account": "chem", "time": "2982616-04:14:00", "ntasks": "1", "cpus-per-task": "1"}
    assert hooks.limit_minutes(step["time"]) is None and hooks.limit_minutes("UNLIMITED") is None
    assert hooks.limit_minutes("2982616-04:13:00") == 0xFFFFFFFE - 1  # the largest real limit
    asked: list[str | None] = []

    def partition_gives(partition: str | None) -> int | None:
        asked.append(partition)
        return 30

    job = hooks.submitted_job(step, 1009, 1009, partition_gives)
    assert (job.time_limit_min, hooks.requested_minutes(job), asked) == (30, 30, [None])
    job = hooks.submitted_job({**step, "time": "nil", "partition": "long"}, 1009, 1009, partition_gives)
    assert (job.time_limit_min, asked[-1]) == (30, "long")
    unbounded = hooks.submitted_job(step, 1009, 1009, lambda partition: None)
    with pytest.raises(hooks.Refused, match="nor does its partition give one"):
        hooks.requested_minutes(unbounded)
