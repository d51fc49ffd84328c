"""The ledger through a PostgreSQL fail-over (issue 26): 32 clients pre-debiting and debiting
through the real service, whose DSN names a primary and its synchronous streaming replica
(``host=a,b port=p,q target_session_attrs=read-write``). Every process of the primary is
SIGKILLed and the replica promoted; the service, left running, recovers by itself. Every
acknowledged pre-debit and debit is in the promoted database with its minutes, none twice,
nothing overdrawn. The window in which clients were refused is printed (``-s``; docs quote it).
A longer run: ``bench/failover.py``.
"""

from __future__ import annotations

from pathlib import Path

from tests.needs import needs, program, root

from .failover import run, verdict
from .services import pg_bindir

CLIENTS = 32

pytestmark = needs(root("the PostgreSQL primary and replica run as 'postgres'"),
                   None if pg_bindir() else "no PostgreSQL (apt-get install postgresql)",
                   program("runuser", "util-linux"))


def test_failover_to_the_promoted_replica_loses_nothing(tokens_file: Path) -> None:
    seen, db = run(tokens_file, CLIENTS, before_s=2.0, after_s=5.0)
    print("\n" + seen.report() + f"; {len(db.jobs) - len(seen.predebits)} landed unacknowledged")
    assert len(seen.predebits) > 100 and len(seen.debits) > 50 and seen.overdrafts > 0
    assert verdict(seen, db) == dict.fromkeys(verdict(seen, db), 0)  # 0 lost, 0 twice, 0 overdrawn
    assert all(code == 200 for code in seen.late), seen.late  # no dead connection handed out again
    after_promotion = [t - seen.promoted for t in seen.refused if t > seen.promoted]
    assert max(after_promotion, default=0) < 10.0, seen.report()
