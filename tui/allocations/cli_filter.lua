-- fairtop's cli_filter (CliFilterPlugins=cli_filter/lua; install as cli_filter.lua next to
-- slurm.conf). Before sbatch/salloc/srun sends a job, `fairtop allocations hook submit` checks that
-- the job's request (CPUs or GPUs x time limit) fits what is left of its project's allocation and
-- otherwise refuses it, printing why on the submitter's terminal. The options go to fairtop in a
-- private temporary file (key=value lines), never on a command line: only the constant FAIRTOP
-- and a name Lua made up reach the shell. The pre-debit at job start (PrologSlurmctld) remains
-- the binding check; this one is the early, readable refusal. Job steps are let through here.
local FAIRTOP = "fairtop"

local KEYS = {"account", "time", "ntasks", "cpus-per-task", "nodes", "gpus", "gres", "partition", "qos"}

function slurm_cli_setup_defaults(options, early_pass)
  return slurm.SUCCESS
end

-- A job step: srun inside a job's allocation (SLURM_JOB_ID, or --jobid). It runs on the credit
-- its job was pre-debited at start, and has no time limit of its own (Slurm hands it NO_VAL):
-- never checked, and no fairtop started. sbatch/salloc inside a job make new jobs: checked.
local function is_step(options)
  return options.type == "srun" and (options.jobid ~= nil or os.getenv("SLURM_JOB_ID") ~= nil)
end

function slurm_cli_pre_submit(options, pack_offset)
  if is_step(options) then
    return slurm.SUCCESS
  end
  local path = os.tmpname()
  local f = io.open(path, "w")
  if f == nil then
    return slurm.SUCCESS  -- cannot check here; the prolog still will
  end
  for _, k in ipairs(KEYS) do
    local v = options[k]
    if v ~= nil then
      -- one value per line: drop line breaks so a value cannot forge another key
      f:write(k, "=", (tostring(v):gsub("[\r\n]", " ")), "\n")
    end
  end
  f:close()
  local status = os.execute(FAIRTOP .. " allocations hook submit < " .. path)
  os.remove(path)
  if status == 0 or status == true then
    return slurm.SUCCESS
  end
  return slurm.ERROR
end

function slurm_cli_post_submit(offset, jobid, stepid)
  return slurm.SUCCESS
end
