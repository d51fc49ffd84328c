"""Real Slurm 22.05.8 outputs from the sandbox (trimmed), for parser tests and fuzzing."""

CONFIG = """\
Configuration data as of 2026-11-21T18:28:26
AccountingStorageTRES   = cpu,mem,energy,node,billing,fs/disk,vmem,pages
ClusterName             = sandbox
FairShareDampeningFactor = 1
PriorityParameters      = (null)
PrioritySiteFactorParameters = (null)
PrioritySiteFactorPlugin = (null)
PriorityDecayHalfLife   = 7-00:00:00
PriorityCalcPeriod      = 00:01:00
PriorityFavorSmall      = No
PriorityFlags           = NO_FAIR_TREE
PriorityMaxAge          = 7-00:00:00
PriorityUsageResetPeriod = NONE
PriorityType            = priority/multifactor
PriorityWeightAge       = 1000
PriorityWeightAssoc     = 0
PriorityWeightFairShare = 10000
PriorityWeightJobSize   = 0
PriorityWeightPartition = 0
PriorityWeightQOS       = 0
PriorityWeightTRES      = (null)
PrivateData             = none
SLURM_VERSION           = 22.05.8

Slurmctld(primary) at vm is UP
"""

PARTITIONS = """\
PartitionName=debug
   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL
   AllocNodes=ALL Default=YES QoS=N/A
   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO
   MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED
   Nodes=sandbox-node
   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO
   OverTimeLimit=NONE PreemptMode=OFF
   State=UP TotalCPUs=16 TotalNodes=1 SelectTypeParameters=NONE
   JobDefaults=(null)
   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED
   TRES=cpu=16,mem=1G,node=1,billing=16

PartitionName=burn
   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL
   AllocNodes=ALL Default=NO QoS=N/A
   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO
   MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED
   Nodes=sandbox-node
   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO
   OverTimeLimit=NONE PreemptMode=OFF
   State=UP TotalCPUs=16 TotalNodes=1 SelectTypeParameters=NONE
   JobDefaults=(null)
   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED
   TRES=cpu=16,mem=1G,node=1,billing=16000000
   TRESBillingWeights=CPU=1000000

PartitionName=parked
   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL
   AllocNodes=ALL Default=NO QoS=N/A
   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO
   MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED
   Nodes=sandbox-node
   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO
   OverTimeLimit=NONE PreemptMode=OFF
   State=DOWN TotalCPUs=16 TotalNodes=1 SelectTypeParameters=NONE
   JobDefaults=(null)
   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED
   TRES=cpu=16,mem=1G,node=1,billing=16000000
   TRESBillingWeights=CPU=1000000

"""

SACCTMGR = """\
Cluster|Account|User|Partition|ParentName|ParentID|ID|LFT|RGT|Share|Priority|GrpTRESMins|GrpTRESRunMins|GrpTRES|GrpJobs|GrpJobsAccrue|GrpSubmit|GrpWall|MaxTRESMins|MaxTRES|MaxTRESPerNode|MaxJobs|MaxJobsAccrue|MaxSubmit|MaxWall|QOS|Def QOS
sandbox|root||||0|1|1|80|1||||||||||||||||normal|
sandbox|root|root|||1|2|78|79|1||||||||||||||||normal|
sandbox|root|u1|||1|38|4|5|10||||||||||||||||normal|
sandbox|root|u2|||1|39|2|3|10||||||||||||||||normal|
sandbox|aa|||root|1|3|66|77|40||||||||||||||||normal|
"""

ASSOC_MGR = """\
Current Association Manager state

Association Records

ClusterName=sandbox Account=root UserName= Partition= Priority=0 ID=1
    SharesRaw/Norm/Level/Factor=1/1.00/1/0.00
    UsageRaw/Norm/Efctv=284954718.02/1.00/1.00
    ParentAccount= Lft=1 DefAssoc=No
    GrpJobs=N(0) GrpJobsAccrue=N(24)
    GrpSubmitJobs=N(24) GrpWall=N(0.77)
    GrpTRES=cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0)
    GrpTRESMins=cpu=N(4),mem=N(0),energy=N(0),node=N(1),billing=N(4749245),fs/disk=N(0),vmem=N(0),pages=N(0)
    GrpTRESRunMins=cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0)
    MaxJobs= MaxJobsAccrue= MaxSubmitJobs= MaxWallPJ=
    MaxTRESPJ=
    MaxTRESPN=
    MaxTRESMinsPJ=
    MinPrioThresh=
ClusterName=sandbox Account=root UserName=root(0) Partition= Priority=0 ID=2
    SharesRaw/Norm/Level/Factor=1/0.00/209/0.00
    UsageRaw/Norm/Efctv=0.00/0.00/0.00
    ParentAccount= Lft=78 DefAssoc=Yes
    GrpJobs=N(0) GrpJobsAccrue=N(0)
    GrpSubmitJobs=N(0) GrpWall=N(0.00)
    GrpTRES=cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0)
    GrpTRESMins=cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0)
    GrpTRESRunMins=cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0)
    MaxJobs= MaxJobsAccrue= MaxSubmitJobs= MaxWallPJ=
    MaxTRESPJ=
    MaxTRESPN=
    MaxTRESMinsPJ=
    MinPrioThresh=
"""

SPRIO = """\
          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES
             18 parked        uaa1       6355          0          0          0       6356          0          0          0           0                     
             19 parked        uab1        711          0          0          0        711          0          0          0           0                     
             20 parked        uab2       2535          0          0          0       2535          0          0          0           0                     
"""

SQUEUE = """\
             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)
                39    parked pending-       u1 PD       0:00      1 (PartitionDown)
                35    parked pending-      uf2 PD       0:00      1 (PartitionDown)
                34    parked pending-      uf1 PD       0:00      1 (PartitionDown)
"""

SQUEUE_O = """\
JOBID|PARTITION|USER|ACCOUNT|STATE|TIME_LIMIT|SUBMIT_TIME|START_TIME|PRIORITY|TRES_ALLOC|
39|parked|u1|root|PENDING|1:00|2026-11-21T18:26:13|N/A|10000|cpu=1,mem=1G,node=1,billing=1000000|
35|parked|uf2|af|PENDING|1:00|2026-11-21T18:26:13|N/A|10000|cpu=1,mem=1G,node=1,billing=1000000|
"""

#: Two records of ``scontrol show assoc_mgr flags=assoc`` (real 22.05.8): a user with MaxJobs=1 and one
#: job running, an account with GrpTRES=cpu=1 and none.
ASSOC_MGR_LIMITS = """\
Current Association Manager state

Association Records

ClusterName=sandbox Account=wq UserName=wqc(1004) Partition= Priority=0 ID=6
    SharesRaw/Norm/Level/Factor=1/0.33/3/0.83
    UsageRaw/Norm/Efctv=359.90/0.00/0.13
    ParentAccount= Lft=11 DefAssoc=Yes
    GrpJobs=N(1) GrpJobsAccrue=N(0)
    GrpSubmitJobs=N(1) GrpWall=N(6.00)
    GrpTRES=cpu=N(1),mem=N(0),energy=N(0),node=N(1),billing=N(1),fs/disk=N(0),vmem=N(0),pages=N(0)
    GrpTRESMins=cpu=N(5),mem=N(0),energy=N(0),node=N(5),billing=N(5),fs/disk=N(0),vmem=N(0),pages=N(0)
    GrpTRESRunMins=cpu=N(9),mem=N(0),energy=N(0),node=N(9),billing=N(9),fs/disk=N(0),vmem=N(0),pages=N(0)
    MaxJobs=1(1) MaxJobsAccrue= MaxSubmitJobs= MaxWallPJ=
    MaxTRESPJ=
    MaxTRESPN=
    MaxTRESMinsPJ=
    MinPrioThresh=
ClusterName=sandbox Account=wqcpu UserName= Partition= Priority=0 ID=9
    SharesRaw/Norm/Level/Factor=1/0.08/13/0.00
    UsageRaw/Norm/Efctv=300.90/0.00/0.00
    ParentAccount=root(1) Lft=2 DefAssoc=No
    GrpJobs=N(0) GrpJobsAccrue=N(1)
    GrpSubmitJobs=N(1) GrpWall=N(5.02)
    GrpTRES=cpu=1(0),mem=N(0),energy=N(0),node=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0)
    GrpTRESMins=cpu=N(5),mem=N(0),energy=N(0),node=N(5),billing=N(5),fs/disk=N(0),vmem=N(0),pages=N(0)
    GrpTRESRunMins=cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0)
    MaxJobs= MaxJobsAccrue= MaxSubmitJobs= MaxWallPJ=
    MaxTRESPJ=
    MaxTRESPN=
    MaxTRESMinsPJ=
    MinPrioThresh=
"""

#: ``squeue -a -O`` with :data:`~tui.sources.slurm_text.SQUEUE_FIELDS` (real 22.05.8 output, a
#: moment when three jobs had just started): a reason in the controller's words (job 16), a begin
#: time, backfill's estimates with SchedNodes, a user hold (priority 0), a down partition.
SQUEUE_WAITING = """\
JOBID|PARTITION|USER|ACCOUNT|STATE|TIME_LIMIT|SUBMIT_TIME|START_TIME|PRIORITY|TRES_ALLOC|REASON|SCHEDNODES|DEPENDENCY|REQ_NODES|NICE|QOS|ELIGIBLE_TIME|
16|burn|wqd|wqspent|PENDING|1:00|2026-11-28T02:46:37|N/A|1667|cpu=1,mem=1G,node=1,billing=1000000|Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions|(null)|(null)||0|normal|2026-11-28T02:46:37|
14|debug|wqa|wq|PENDING|5:00|2026-11-28T02:46:33|2026-11-28T03:46:33|8333|cpu=1,mem=1G,node=1,billing=1|BeginTime|(null)|(null)||0|normal|2026-11-28T03:46:33|
11|debug|wqa|wq|PENDING|5:00|2026-11-28T02:46:33|2026-11-28T02:56:36|7333|cpu=5,mem=1G,node=1,billing=5|Resources|sandbox-node|(null)||1000|normal|2026-11-28T02:46:33|
3|debug|wqc|wq|PENDING|10:00|2026-11-28T02:46:32|2026-11-28T03:01:00|6667|cpu=1,mem=1G,node=1,billing=1|Priority|sandbox-node|(null)||0|normal|2026-11-28T02:46:32|
12|debug|wqa|wq|PENDING|5:00|2026-11-28T02:46:33|N/A|0|cpu=1,mem=1G,node=1,billing=1|JobHeldUser|(null)|(null)||0|normal|N/A|
7|debug|wqa|wq|RUNNING|10:00|2026-11-28T02:46:33|2026-11-28T02:51:36|8333|cpu=1,node=1,billing=1|None|(null)|(null)||0|one|2026-11-28T02:46:33|
15|parked|wqa|wq|PENDING|5:00|2026-11-28T02:46:33|N/A|8333|cpu=1,mem=1G,node=1,billing=1000000|PartitionDown|(null)|(null)||0|normal|2026-11-28T02:46:33|
"""

#: spec 6.6: a Fair Tree start reconfigured to classic (real 22.05.8 output).
SSHARE = """\
Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare
root|||0.000000|8998736||1.000000|0.000000
 root|root|1|0.009901|0|0.000000|0.000000|1.000000
 chem||60|0.594059|5999154|0.666666|0.666666|0.459386
  chem|carol|3|1.000000|5999154|0.666666|0.666666|0.629961
 phys||40|0.396040|2999581|0.333334|0.333334|0.557998
  phys|alice|1|0.333333|1999720|0.222222|0.259259|0.583264
  astro||parent|0.396040|999861|0.111111|0.333334|0.557998
   astro|bob|2|0.666667|999861|0.111111|0.259260|0.763717
"""

ALL = {"SSHARE": SSHARE, "CONFIG": CONFIG, "PARTITIONS": PARTITIONS, "SACCTMGR": SACCTMGR,
       "ASSOC_MGR": ASSOC_MGR, "SPRIO": SPRIO, "SQUEUE": SQUEUE, "SQUEUE_O": SQUEUE_O,
       "SQUEUE_WAITING": SQUEUE_WAITING, "ASSOC_MGR_LIMITS": ASSOC_MGR_LIMITS}
