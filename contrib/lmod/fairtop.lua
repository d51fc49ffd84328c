-- fairtop: where you stand on the cluster (fairshare, allocations, what-if planning).
-- Lmod module file for the site install of contrib/site-install.sh: install it as
-- MODULEFILES/fairtop/VERSION.lua (the script does); `module load fairtop` then puts only
-- `fairtop` on PATH (ROOT/VERSION/bin holds one link into the venv, so the venv's python and pip
-- never shadow the user's own).

local root = "/opt/fairtop"  -- where site-install.sh put the versions (its ROOT argument)
local version = myModuleVersion()
local prefix = pathJoin(root, version)

whatis("Name: fairtop")
whatis("Version: " .. version)
whatis("Description: where you stand on the cluster: fairshare, allocation balance, what-if planning")
help([[
fairtop ]] .. version .. [[ - where you stand on the cluster.

  fairtop                  the full-screen app (q quits)
  fairtop standing         your standing in one line (add --format json for scripts)
  fairtop report           the whole fairshare tree, as sshare prints it, recomputed
  fairtop --help           every command

The site's defaults (the published snapshot, the allocation service) come from
/etc/fairtop/config.toml; `fairtop info` shows the files in use.
]])

if not isDir(prefix) then
  LmodError("fairtop " .. version .. " is not installed under " .. prefix)
end
prepend_path("PATH", pathJoin(prefix, "bin"))
