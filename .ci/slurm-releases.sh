# shellcheck shell=bash
# CI (issue 17): Slurm releases beside the default 22.05 sandbox, sourced by .ci/run after it.
# .ci/run calls releases_build_start before the tests not marked slurm_release and releases_start
# after them (a fresh machine's build, ~8.5 min, then overlaps those tests instead of preceding them).
# For each release in $FAIRTOP_CI_SLURM (default "26.05.3"; add 24.11.7 to test it too: about 5 more
# minutes on a fresh machine, see README "Slurm releases"): build it from ../shared/src with the
# sandbox's build.sh (cached in /opt/slurm-VERSION by the tarball's sha256: ~4-5 min once on 2 cores,
# then instant), start its sandbox on its own directory and ports, write the environment file
# that tests/sandbox/_sandbox.py::release_env reads, and export FAIRTOP_SANDBOX_<MAJORMINOR>
# (FAIRTOP_SANDBOX_2605) naming it. As root, a release that does not build or start fails CI (releases_failed
# is set; .ci/run exits non-zero), it is never skipped quietly. Stopped (down.sh --purge) on exit.
releases_failed=()
releases_up=()

release_ports() {  # release_ports 26.05.3 -> "SANDBOX_DIR=... SANDBOX_*_PORT=..." (fixed per release)
  case "$1" in
    26.05.*) echo "SANDBOX_DIR=/tmp/slurm-sandbox-2605 SANDBOX_CTLD_PORT=7717 SANDBOX_SLURMD_PORT=7718 SANDBOX_DBD_PORT=7719 SANDBOX_DB_PORT=13406" ;;
    24.11.*) echo "SANDBOX_DIR=/tmp/slurm-sandbox-2411 SANDBOX_CTLD_PORT=7727 SANDBOX_SLURMD_PORT=7728 SANDBOX_DBD_PORT=7729 SANDBOX_DB_PORT=13416" ;;
    *) return 1 ;;
  esac
}

release_up() {  # release_up VERSION: build, start, export; 0 when up
  local version=$1 t0=$SECONDS prefix vars var envfile
  vars=$(release_ports "$version") || { echo "CI: no ports for Slurm $version"; return 1; }
  prefix=$("$SANDBOX/build.sh" "$version" 2>/tmp/fairtop-ci-build-"$version".log | tail -1) \
    || { tail -20 /tmp/fairtop-ci-build-"$version".log; return 1; }
  echo "slurm $version built or cached in $((SECONDS - t0)) s ($prefix)"
  # shellcheck disable=SC2086
  if ! env $vars SANDBOX_SLURM="$prefix" "$SANDBOX/up.sh" >/tmp/fairtop-ci-sandbox-"$version".log 2>&1; then
    tail -20 /tmp/fairtop-ci-sandbox-"$version".log
    return 1
  fi
  # the environment file beside (not in) SANDBOX_DIR: a test that re-creates the sandbox purges that
  envfile=/tmp/fairtop-ci-slurm-$version.env
  { printf '%s\n' $vars; echo "SANDBOX_SLURM=$prefix"; } > "$envfile"
  var=FAIRTOP_SANDBOX_$(echo "$version" | cut -d. -f1-2 | tr -d .)
  export "$var=$envfile"
  releases_up+=("$version")
  echo "slurm $version sandbox up in $((SECONDS - t0)) s ($var=$envfile)"
}

releases_down() {  # every release CI may have started (the background part of .ci/run starts them)
  local version vars
  for version in ${FAIRTOP_CI_SLURM:-26.05.3}; do
    vars=$(release_ports "$version") || continue
    [ -d "$(echo "$vars" | sed 's/^SANDBOX_DIR=\([^ ]*\).*/\1/')" ] || continue
    # shellcheck disable=SC2086
    env $vars SANDBOX_SLURM="/opt/slurm-$version" "$SANDBOX/down.sh" --purge >/dev/null 2>&1 || true
  done
}

releases_build_pids=()
releases_build_start() {  # build each release in the background, niced: the tests running meanwhile come first
  local version
  [ "$(id -u)" = 0 ] && [ -x "$SANDBOX/build.sh" ] || return 0
  for version in ${FAIRTOP_CI_SLURM:-26.05.3}; do
    nice -n 19 "$SANDBOX/build.sh" "$version" >/dev/null 2>/tmp/fairtop-ci-build-"$version".log &
    releases_build_pids+=($!)
    echo "slurm $version: building (or cached) in the background, pid $!"
  done
}

releases_start() {  # wait for the builds, then start each release's sandbox (release_up: build cached)
  local pid version
  # (polled, not waited: .ci/run calls this in a subshell, which cannot wait for its parent's children)
  for pid in "${releases_build_pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null; do sleep 2; done
  done
  if [ "$(id -u)" != 0 ]; then
    loud "NOT ROOT: the Slurm ${FAIRTOP_CI_SLURM:-26.05.3} sandbox tests will be SKIPPED"
  elif [ ! -x "$SANDBOX/build.sh" ]; then
    loud "NO $SANDBOX/build.sh: Slurm ${FAIRTOP_CI_SLURM:-26.05.3} cannot be tested"
    releases_failed+=("${FAIRTOP_CI_SLURM:-26.05.3}")
  else
    for version in ${FAIRTOP_CI_SLURM:-26.05.3}; do
      release_up "$version" || { loud "SLURM $version DID NOT BUILD OR START: CI FAILS"; releases_failed+=("$version"); }
    done
    prev_exit_trap=$(trap -p EXIT | sed "s/^trap -- '//; s/' EXIT\$//")
    trap "releases_down; ${prev_exit_trap:-true}" EXIT
  fi
}
