-- fairtop's cli_filter (CliFilterPlugins=cli_filter/lua; install as cli_filter.lua next to
-- slurm.conf). Before sbatch/salloc sends a job, it checks that the job's request (CPUs or GPUs x
-- time limit) fits what is left of its project's allocation and otherwise refuses it, printing why
-- on the submitter's terminal. The pre-debit at job start (PrologSlurmctld) remains the binding
-- check; this one is the early, readable refusal.
--
-- Where the balances come from, fastest first:
-- 1. The file `fairtop allocations publish-balances` writes (BALANCES below, or $FAIRTOP_BALANCES):
--    read here, no process started. Older than STALE_S seconds: no opinion (the start decides).
--    A name ending in ".d" is the folder `publish-balances --by-group` writes (PrivateData sites):
--    one file per Unix gid, readable by that group only; the filter opens the files of the
--    submitter's own groups (from /proc/self/status) and decides on those. A job's account that
--    none of them lists is not known to be without allocation: fairtop decides (2.).
-- 2. Otherwise `fairtop allocations hook submit` asks the service. The options go to fairtop in a
--    private temporary file (key=value lines), never on a command line: only the constant FAIRTOP
--    and a name Lua made up reach the shell.
-- Job steps (srun inside a job) are let through at once.
local FAIRTOP = "fairtop"
local BALANCES = nil   -- e.g. "/shared/fairtop/balances", or ".../balances.d" (nil: every check starts fairtop)
local STALE_S = 60

local KEYS = {"account", "time", "ntasks", "cpus-per-task", "nodes", "gpus", "gres", "partition", "qos"}
-- Slurm's NO_VAL and INFINITE time limits, in minutes: no limit a job can be charged by
local NO_LIMIT = 4294967294

function slurm_cli_setup_defaults(options, early_pass)
  return slurm.SUCCESS
end

-- A job step: srun inside a job's allocation (SLURM_JOB_ID, or --jobid). It runs on the credit
-- its job was pre-debited at start, and has no time limit of its own (Slurm hands it NO_VAL):
-- never checked, and no fairtop started. sbatch/salloc inside a job make new jobs: checked.
local function is_step(options)
  return options.type == "srun" and (options.jobid ~= nil or os.getenv("SLURM_JOB_ID") ~= nil)
end

local function count(v)  -- a positive whole number option, else nil
  local n = v ~= nil and tonumber(tostring(v):match("^%d+$")) or nil
  if n ~= nil and n > 0 then return n end
  return nil
end

-- Slurm's time_str2mins: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S; seconds round up. nil: no limit;
-- false: not a time this filter reads (fairtop then decides).
local function minutes(v)
  if v == nil then return nil end
  local text = tostring(v)
  local upper = text:upper()
  if text == "" or text == "nil" or text == "(null)" or upper == "UNLIMITED" or upper == "INFINITE"
     or text == "-1" then
    return nil
  end
  local d, h, m, s = 0, 0, 0, 0
  local days, rest = text:match("^(%d+)%-(.+)$")
  local parts = {}
  for p in (rest or text):gmatch("[^:]+") do parts[#parts + 1] = p end
  for _, p in ipairs(parts) do
    if not p:match("^%d+$") then return false end
  end
  if days then
    d = tonumber(days)
    if #parts == 1 then h = tonumber(parts[1])
    elseif #parts == 2 then h, m = tonumber(parts[1]), tonumber(parts[2])
    elseif #parts == 3 then h, m, s = tonumber(parts[1]), tonumber(parts[2]), tonumber(parts[3])
    else return false end
  else
    if #parts == 1 then m = tonumber(parts[1])
    elseif #parts == 2 then m, s = tonumber(parts[1]), tonumber(parts[2])
    elseif #parts == 3 then h, m, s = tonumber(parts[1]), tonumber(parts[2]), tonumber(parts[3])
    else return false end
  end
  local total = math.ceil((((d * 24 + h) * 60 + m) * 60 + s) / 60)
  if total >= NO_LIMIT then return nil end
  return total
end

-- The submitter's real gid and all its groups (real gid first, then the supplementary ones),
-- from /proc/self/status: no process started.
local function my_groups()
  local f = io.open("/proc/self/status", "r")
  if f == nil then return nil, {} end
  local text = f:read("*a")
  f:close()
  local gid = tonumber(text:match("\nGid:%s*(%d+)"))
  local groups, seen = {}, {}
  for g in ((gid and tostring(gid) or "") .. " " .. (text:match("\nGroups:([^\n]*)") or "")):gmatch("%d+") do
    if not seen[g] then seen[g] = true; groups[#groups + 1] = g end
  end
  return gid, groups
end

local function commas(n)  -- 1234567 -> "1,234,567"
  local s = string.format("%d", n)
  local sign, digits = s:match("^(-?)(%d+)$")
  local out = digits:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
  return sign .. out
end

-- One published file's allocations (appended to `allocs`), and when it was written; nil when it
-- cannot be read or is not one of ours.
local function read_balances(path, allocs)
  local f = io.open(path, "r")
  if f == nil then return nil end
  local written = tonumber((f:read("*l") or ""):match("^# fairtop balances 1 (%d+)$"))
  if written == nil then f:close() return nil end
  for line in f:lines() do
    local a = {}
    for cell in line:gmatch("[^\t]+") do a[#a + 1] = cell end
    if #a == 8 then
      allocs[#allocs + 1] = {account = a[1], gid = tonumber(a[2]), resource = a[3], start = a[4],
                             ["end"] = a[5], balance = tonumber(a[6]), id = a[7], project = a[8]}
    end
  end
  f:close()
  return written
end

-- The published allocations the submitter may read, their age in seconds (of the oldest file
-- read), and whether they are only its groups' share; nil when there is none to read.
local function published(groups)
  local path = os.getenv("FAIRTOP_BALANCES") or BALANCES
  if path == nil or path == "" then return nil end
  local allocs, oldest = {}, nil
  local folder = path:gsub("/+$", "")
  local by_group = folder:sub(-2) == ".d"
  if by_group then
    for _, g in ipairs(groups) do  -- another group's file: refused by the kernel, skipped
      local written = read_balances(folder .. "/" .. g, allocs)
      if written ~= nil and (oldest == nil or written < oldest) then oldest = written end
    end
  else
    oldest = read_balances(path, allocs)
  end
  if oldest == nil then return nil end
  return allocs, os.time() - oldest, by_group
end

-- true: fits (or no opinion: the start decides); false: refused (said why); nil: cannot decide here.
local function check_published(options)
  local limit = minutes(options.time)
  if not limit then return nil end  -- none given: its partition's default, which fairtop looks up
  local gid, groups = my_groups()
  local allocs, age, by_group = published(groups)
  if allocs == nil then return nil end
  if age > STALE_S then
    io.stderr:write(string.format("fairtop: balance not checked: the published balances are %d s old "
                                  .. "(the job's start will check)\n", age))
    return true
  end
  local nodes = count(options.nodes) or 1
  local cpus = (count(options.ntasks) or nodes) * (count(options["cpus-per-task"]) or 1)
  local gpus = count(options.gpus) or 0
  for part in tostring(options.gres or ""):gmatch("[^,]+") do
    local bits = {}
    for b in part:gmatch("[^:]+") do bits[#bits + 1] = b end
    if bits[1] == "gpu" and #bits > 1 and bits[#bits]:match("^%d+$") then
      gpus = math.max(gpus, tonumber(bits[#bits]))
    end
  end
  local resource, units = "cpu", cpus
  if gpus > 0 then resource, units = "gpu", gpus end
  local need = units * limit
  local account, today = options.account, os.date("%Y-%m-%d")
  if by_group and account ~= nil then  -- an account the readable files do not list: fairtop decides
    local listed = false
    for _, a in ipairs(allocs) do listed = listed or a.account == tostring(account) end
    if not listed then return nil end
  end
  local chosen = nil
  for pass = 1, 2 do  -- the job's account first, else the submitter's group
    for _, a in ipairs(allocs) do
      if chosen == nil and a.resource == resource and a.start <= today and today <= a["end"]
         and ((pass == 1 and account ~= nil and a.account == tostring(account)) or (pass == 2 and a.gid == gid)) then
        chosen = a
      end
    end
  end
  if chosen == nil then
    io.stderr:write(string.format("fairtop: job refused: no active %s allocation for account %s: ask your "
                                  .. "project's PI or the allocation office\n", resource, account or "?"))
    return false
  end
  if need > chosen.balance then
    local su = string.format("%.1f", chosen.balance / 60)
    local whole, tenth = su:match("^(-?%d+)%.(%d)$")
    io.stderr:write(string.format("fairtop: job refused: allocation %s of %s (%s) has %s %s-minutes left "
                                  .. "(%s.%s SU); this job may use up to %s (%d x %d min). Ask for less time or "
                                  .. "fewer CPUs, or ask for a credit\n", chosen.id, chosen.project, resource,
                                  commas(chosen.balance), resource, commas(tonumber(whole)), tenth,
                                  commas(need), units, limit))
    return false
  end
  io.stderr:write(string.format("fairtop: job fits: %s of %s %s-minutes left\n", commas(need),
                                commas(chosen.balance), resource))
  return true
end

function slurm_cli_pre_submit(options, pack_offset)
  if is_step(options) then
    return slurm.SUCCESS
  end
  local verdict = check_published(options)
  if verdict == true then return slurm.SUCCESS end
  if verdict == false then return slurm.ERROR end
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
