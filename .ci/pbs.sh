#!/usr/bin/env bash
# CI (issue 18): the real OpenPBS pbsfs for tests/engine/test_pbsfs_oracle.py, built from
# ../shared/src by ../shared/pbs-sandbox/build.sh into /opt/openpbs (about 2 minutes on 2 cores
# once; a stamp of the tarball's sha256 makes later runs instant). As root a failed build makes
# those tests fail (CI=true); without root they skip loudly.
set -uo pipefail
scripts=${FAIRTOP_PBS_SANDBOX:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/shared/pbs-sandbox}
if [ "$(id -u)" != 0 ]; then
  printf '\n!!!!!!!! %s\n\n' "NOT ROOT: the real-pbsfs tests will be SKIPPED"
  exit 0
fi
t0=$SECONDS
if prefix=$("$scripts/build.sh" 2>/tmp/fairtop-ci-pbs-build.log | tail -1) && [ -x "$prefix/sbin/pbsfs" ]; then
  echo "pbsfs built or cached in $((SECONDS - t0)) s ($prefix)"
else
  tail -10 /tmp/fairtop-ci-pbs-build.log
  printf '\n!!!!!!!! %s\n\n' "PBSFS DID NOT BUILD: the real-pbsfs tests will FAIL"
fi
