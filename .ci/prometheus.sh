#!/usr/bin/env bash
# CI (issue 20): Debian's prometheus package, for tests/metrics (promtool check metrics / rules,
# and a real Prometheus on 127.0.0.1 scraping 'fairtop serve-metrics'). Nothing is started here:
# the test starts its own Prometheus on a free port with a temporary config and storage.
# Installing the package starts no service here (no systemd, and the image's policy-rc.d refuses
# init scripts); the tests never use a system Prometheus anyway. Measured: reinstalling the
# package with its .deb cached took 5.1 s; a first install also downloads it (~25 MB) and
# its few required dependencies (recommends are skipped). Without root: a loud notice; those tests skip (as root they fail).
set -uo pipefail
if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
  echo "prometheus: $(prometheus --version 2>&1 | head -1)"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  printf '\n!!!!!!!! %s\n\n' "NO PROMETHEUS and not root: the real-Prometheus tests will be SKIPPED"
  exit 0
fi
t0=$SECONDS
install() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends prometheus \
              >/tmp/fairtop-ci-prometheus.log 2>&1; }
install || { apt-get update -q >/dev/null 2>&1 && install; } || {
  tail -5 /tmp/fairtop-ci-prometheus.log
  printf '\n!!!!!!!! %s\n\n' "PROMETHEUS DID NOT INSTALL: the real-Prometheus tests will FAIL"
  exit 0
}
echo "prometheus installed in $((SECONDS - t0)) s: $(prometheus --version 2>&1 | head -1)"
