#!/usr/bin/env bash
# site-install.sh WHEEL [ROOT [MODULEFILES]] - one fairtop for every user of a machine, from the wheel.
#   ROOT/VERSION/venv         a venv of the system python3 (3.11+) holding fairtop and its dependencies
#   ROOT/VERSION/bin/fairtop  a link into it: the only thing the module puts on PATH
#   MODULEFILES/fairtop/VERSION.lua   contrib/lmod/fairtop.lua with its root set to ROOT
# Defaults: ROOT=/opt/fairtop, MODULEFILES=/opt/modulefiles (users: `module use /opt/modulefiles`,
# or add it to the site's MODULEPATH). Run as root (or the owner of ROOT); every user can read what
# it writes (the .pyc files included: pip compiles them, so no run compiles fairtop again).
# Versions side by side: install the next wheel, test it with `module load fairtop/NEW`, then make it
# the default (Lmod takes the highest version, or a MODULEFILES/fairtop/default link).
# Environment: PYTHON (default python3; refused when other users cannot run it, e.g. under root's home: then
# PYTHON=/usr/bin/python3), PIP_INSTALL_ARGS (extra pip install options, e.g. an index).
# Without Lmod: link ROOT/VERSION/bin/fairtop into /usr/local/bin.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 1 ] && [ -f "$1" ] || { echo "usage: $0 fairtop-VERSION-py3-none-any.whl [ROOT [MODULEFILES]]" >&2; exit 2; }
wheel=$1 root=${2:-/opt/fairtop} modules=${3:-/opt/modulefiles}
version=$(basename "$wheel" | cut -d- -f2)
prefix=$root/$version
py=${PYTHON:-python3}
"$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "$0: $py is $("$py" -V 2>&1); fairtop needs 3.11+ (PYTHON=python3.11 $0 ...)" >&2; exit 1; }
# The venv's python links to this interpreter: under a home directory (pyenv, conda, a module) other
# users cannot reach it, and `module load fairtop` would hand them 'bad interpreter: Permission denied'.
hidden=$("$py" - <<'PY'
import os, stat, sys
def closed(path: str, leaf: int) -> str:  # the first part of path that others cannot pass, or ''
    parts = os.path.abspath(path).split(os.sep)
    for i in range(2, len(parts) + 1):
        part = os.sep.join(parts[:i]) or os.sep
        need = leaf if i == len(parts) else stat.S_IXOTH
        if os.stat(part).st_mode & need != need:
            return part
    return ''
exe = sys._base_executable
for path, leaf in ((exe, stat.S_IXOTH), (os.path.realpath(exe), stat.S_IXOTH),
                   (os.path.dirname(os.__file__), stat.S_IROTH | stat.S_IXOTH)):
    if closed(path, leaf):
        print(f"{exe} ({closed(path, leaf)} is closed to them)")
        break
PY
)
[ -z "$hidden" ] \
  || { echo "$0: other users cannot run $py: $hidden; pass a system interpreter: PYTHON=/usr/bin/python3 $0 $*" >&2; exit 1; }
umask 022
"$py" -m venv "$prefix/venv"
# shellcheck disable=SC2086 # PIP_INSTALL_ARGS is a list of options
"$prefix/venv/bin/python" -m pip install -q --disable-pip-version-check ${PIP_INSTALL_ARGS:-} "$wheel"
mkdir -p "$prefix/bin" "$modules/fairtop"
ln -sfn ../venv/bin/fairtop "$prefix/bin/fairtop"
sed "s|^local root = \"[^\"]*\"|local root = \"$root\"|" "$here/lmod/fairtop.lua" > "$modules/fairtop/$version.lua"
"$prefix/bin/fairtop" --version
echo "module file: $modules/fairtop/$version.lua (module use $modules; module load fairtop)"
