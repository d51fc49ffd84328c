"""The ledger through a PostgreSQL fail-over, longer than the test (tests/allocations/test_failover.py).

A primary and its synchronous streaming replica on 127.0.0.1 (throwaway clusters, as root), the
service on the multi-host DSN, ``--clients`` clients pre-debiting and debiting for ``--before``
seconds; then every process of the primary is SIGKILLed and the replica promoted, and the
clients go on for ``--after`` seconds. Prints, for each run, when clients were refused, how long
the requests across the kill waited, and what the promoted database lost (all 0 is right).

    .venv/bin/python bench/failover.py --runs 3
    .venv/bin/python bench/failover.py --code . --code /path/to/other/checkout   # compare two

``--code`` runs the service from each checkout in turn (the DSN as a URL, which both take).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.allocations.failover import run, verdict  # noqa: E402
from tests.allocations.services import write_tokens  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--before", type=float, default=5.0, help="seconds of load before the kill (default 5)")
    ap.add_argument("--after", type=float, default=30.0, help="seconds of load after the promotion (default 30)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--code", type=Path, action="append", default=[],
                    help="run the service from this checkout (repeat to compare; default this one)")
    args = ap.parse_args()
    tokens = write_tokens(Path(tempfile.mkdtemp(prefix="fairtop-failover-")) / "tokens.toml")
    bad = 0
    for code in args.code or [ROOT]:
        for n in range(1, args.runs + 1):
            seen, db = run(tokens, args.clients, args.before, args.after, code=code.resolve(),
                           url_form=bool(args.code))
            wrong = {k: v for k, v in verdict(seen, db).items() if v}
            bad += bool(wrong)
            print(f"{code} run {n}: {seen.report()}; {len(db.jobs) - len(seen.predebits)} landed unacknowledged; "
                  f"{'WRONG: ' + str(wrong) if wrong else '0 lost, 0 twice, 0 overdrawn'}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
