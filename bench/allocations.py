"""Allocation service throughput: pre-debits per second and latency with concurrent clients.

Starts ``fairtop serve-allocations`` (token auth) on 127.0.0.1 over SQLite (a temp file) and/or
PostgreSQL (``--pg URL`` of a server where a database may be created, ``$FAIRTOP_TEST_PG``, or a
throwaway cluster started here as root), credits enough for every job, then runs ``--clients``
clients (spread over ``--procs`` processes, each an asyncio loop of raw HTTP/1.1 keep-alive
connections, so that the client's own cost stays small)
that each send ``--per-client`` pre-debits one after the other, spread over ``--allocations``
projects. Afterwards it checks the invariants: no 5xx, every answer 201, the ledger's running
totals equal its activity, and the held minutes equal the sum acknowledged.

    .venv/bin/python bench/allocations.py                      # both stores, 32 x 1000
    .venv/bin/python bench/allocations.py --store postgresql --per-client 200

One allocation under load (a job array of one project), on storage whose flush takes 5 ms, today's
code against another checkout's in one run (``--code`` runs the service from that checkout):

    .venv/bin/python bench/allocations.py --store postgresql --allocations 1 --per-client 313 \
        --flush-ms 5 --code . --code /path/to/other/checkout
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from allocations.services import SUPER, PgCluster, Server, create_database, write_tokens  # noqa: E402

from cpu_bound import CpuBound  # noqa: E402

from tui.allocations.ledger import open_ledger  # noqa: E402

HEADERS = {"Authorization": f"Bearer {SUPER}"}


async def _post(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, path: str,
                body: bytes) -> tuple[int, float | None]:
    """One HTTP/1.1 keep-alive POST with a JSON body; returns the status and what the service says
    the request stayed in it (``Server-Timing``, seconds; None without). The body is read and
    dropped. A raw client, so that the bench measures the service rather than the client."""
    writer.write(b"POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (path.encode(), host.encode(), SUPER.encode(), len(body), body))
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    stayed = None
    for line in head.split(b"\r\n"):
        name = line[:15].lower()
        if name == b"content-length:":
            length = int(line[15:])
        elif name == b"server-timing: ":
            stayed = float(line.rsplit(b"dur=", 1)[1]) / 1000
    await reader.readexactly(length)
    return status, stayed


def _worker(url: str, clients: range, per_client: int, gids: list[int], tag: str, out: mp.Queue) -> None:
    host, port = url.removeprefix("http://").rsplit(":", 1)

    async def client(n: int) -> tuple[list[float], dict[int, int], int]:
        lat: list[float] = []
        codes: dict[int, int] = {}
        held = 0
        gid = gids[n % len(gids)]
        reader, writer = await asyncio.open_connection(host, int(port))
        for i in range(per_client):
            minutes = 1 + (i % 7)
            body = (b'{"job_id": "%s-%d-%d", "uid": %d, "gid": %d, "resource": "cpu", "minutes": %d}'
                    % (tag.encode(), n, i, 6000 + n, gid, minutes))
            t0 = time.perf_counter()
            status, _ = await _post(reader, writer, f"{host}:{port}", "/job", body)
            lat.append(time.perf_counter() - t0)
            codes[status] = codes.get(status, 0) + 1
            if status == 201:
                held += minutes
        writer.close()
        return lat, codes, held

    async def main() -> list:
        return await asyncio.gather(*(client(n) for n in clients))

    results = asyncio.run(main())
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out.put((results, usage.ru_utime + usage.ru_stime))


def _open_loop(url: str, rate: float, seconds: float, gids: list[int], tag: str, max_conns: int,
               out: mp.Queue) -> None:
    """Pre-debits arriving at ``rate`` a second for ``seconds`` whatever the answers (an arrival is
    a job starting: refused, it does not wait, slurmctld requeues it), each on an idle keep-alive
    connection or a new one (at most ``max_conns``). Puts (latencies of the 201s, codes, minutes
    held, arrivals sent late, latencies of the 201s sent after the first second, what those stayed
    in the service by its Server-Timing, CPU seconds): a fresh service does not know its rate yet,
    and lets a first burst in whole. The two latencies differ by the HTTP parsing and the event
    loop's queue on either side, and by this client's own waits for a core."""
    host, port = url.removeprefix("http://").rsplit(":", 1)

    async def main() -> tuple[list[float], dict[int, int], int, int, list[float], list[float]]:
        idle: asyncio.Queue = asyncio.Queue()
        opened = 0
        lat: list[float] = []
        steady: list[float] = []
        stayed: list[float] = []
        codes: dict[int, int] = {}
        held = late = 0

        async def arrival(i: int) -> None:
            nonlocal opened, held
            if idle.empty() and opened < max_conns:
                opened += 1
                conn = await asyncio.open_connection(host, int(port))
            else:
                conn = await idle.get()
            minutes = 1 + i % 7
            body = (b'{"job_id": "%s-%d", "uid": %d, "gid": %d, "resource": "cpu", "minutes": %d}'
                    % (tag.encode(), i, 6000 + i % 100, gids[i % len(gids)], minutes))
            t0 = time.perf_counter()
            status, stay = await _post(*conn, f"{host}:{port}", "/job", body)
            codes[status] = codes.get(status, 0) + 1
            if status == 201:
                lat.append(time.perf_counter() - t0)
                if i >= rate:
                    steady.append(lat[-1])
                    if stay is not None:
                        stayed.append(stay)
                held += minutes
            idle.put_nowait(conn)

        loop = asyncio.get_running_loop()
        start = loop.time()
        tasks = []
        for i in range(int(rate * seconds)):
            delay = start + i / rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            elif delay < -0.01:
                late += 1
            tasks.append(asyncio.create_task(arrival(i)))
        await asyncio.gather(*tasks)
        return lat, codes, held, late, steady, stayed

    result = asyncio.run(main())
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out.put((*result, usage.ru_utime + usage.ru_stime))


def _tally(results: list, url: str, aids: list[int]) -> tuple[list[float], dict[int, int], int, int]:
    """The clients' (latencies, codes, minutes held, ...) summed: sorted latencies, codes, minutes
    acknowledged, and the minutes the ledger holds on ``aids``."""
    lat = sorted(x for r in results for x in r[0])
    codes: dict[int, int] = {}
    for r in results:
        for k, v in r[1].items():
            codes[k] = codes.get(k, 0) + v
    with httpx.Client(base_url=url, headers=HEADERS, timeout=30) as su:
        got = sum(su.get(f"/alloc/{aid}").json()["predebits"] for aid in aids)
    return lat, codes, sum(r[2] for r in results), got


def _rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (the service's worker processes), in MB."""
    total = 0
    for status in [Path(f"/proc/{pid}/status"), *(Path(f"/proc/{c}/status") for c in _child_pids(pid))]:
        try:
            total += next(int(line.split()[1]) for line in status.read_text().splitlines()
                          if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
    return total / 1024


def _child_pids(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def overload(store: str, target: str, args: argparse.Namespace, tokens: Path, capacity: float,
             bound: CpuBound | None = None, code: Path = ROOT) -> dict:
    """``args.overload`` times ``capacity`` pre-debits a second, open loop, for ``args.seconds``,
    at the service of checkout ``code``."""
    floor = ["--admit-floor", str(args.admit_floor)] if args.admit_floor else []
    if args.admit_wait_ms is not None and "--admit-wait-ms" in _serve_help(code):
        floor += ["--admit-wait-ms", f"{args.admit_wait_ms:g}"]
    server = Server(target, ["--auth", "token", "--tokens", str(tokens), "--pool", str(args.pool), *floor],
                    code=code).start()
    if bound:
        bound.add(server.proc.pid)
    try:
        gids, aids = _allocations(server.url, args.allocations)
        rate = args.overload * capacity
        queue: mp.Queue = mp.Queue()
        procs = [mp.Process(target=_open_loop, args=(server.url, rate / args.procs, args.seconds, gids,
                                                      f"{store}{p}", 2048 // args.procs, queue))
                 for p in range(args.procs)]
        assert server.proc is not None
        rss = [_rss_mb(server.proc.pid)]
        cpu0 = _cpu_seconds(server.proc.pid)
        t0 = time.perf_counter()
        for p in procs:
            p.start()
        answers = []
        while len(answers) < len(procs):
            try:
                answers.append(queue.get(timeout=0.25))
            except Exception:  # noqa: BLE001 - queue.Empty: sample the memory meanwhile
                rss.append(_rss_mb(server.proc.pid))
        wall = time.perf_counter() - t0
        cpu = _cpu_seconds(server.proc.pid) - cpu0
        for p in procs:
            p.join()
        lat, codes, held, got = _tally(answers, server.url, aids)
        lat = lat or [0.0]
        n = len(lat)
        steady = sorted(x for a in answers for x in a[4]) or [0.0]
        stayed = sorted(x for a in answers for x in a[5])
        label = f"{store}, {_describe(code)}" if args.code else store
        return {"store": label, "asked": rate, "offered": sum(codes.values()) / wall,
                "late": sum(a[3] for a in answers), "accepted": codes.get(201, 0) / wall,
                "refused": codes.get(503, 0) / wall, "codes": codes, "p50_ms": 1000 * lat[n // 2],
                "p99_ms": 1000 * lat[min(n - 1, int(n * 0.99))], "max_ms": 1000 * lat[-1],
                "p99_after_1s_ms": 1000 * steady[min(len(steady) - 1, int(len(steady) * 0.99))],
                "service_p99_after_1s_ms": 1000 * stayed[min(len(stayed) - 1, int(len(stayed) * 0.99))]
                if stayed else None,
                "rss_before": rss[0], "rss_max": max(rss), "rss_after": rss[-1], "consistent": got == held,
                "cpu_pct": 100 * cpu / wall}
    finally:
        server.stop()


def _allocations(url: str, count: int) -> tuple[list[int], list[int]]:
    """``count`` projects with an allocation each, credited for any run: their gids and ids."""
    year = date.today().year
    gids = [9000 + k for k in range(count)]
    aids = []
    with httpx.Client(base_url=url, headers=HEADERS, timeout=30) as su:
        for gid in gids:
            pid = su.post("/project", json={"name": f"b{gid}", "gid": gid, "account": f"b{gid}"}).json()["id"]
            aid = su.post("/alloc", json={"project": pid, "resource": "cpu", "category": "bench",
                                          "start": f"{year}-01-01", "end": f"{year}-12-31"}).json()["id"]
            su.post(f"/alloc/{aid}/credit", json={"minutes": 10**9})
            aids.append(aid)
    return gids, aids


def _cpu_seconds(pid: int) -> float:
    """User + system CPU so far of a process, its live children (worker processes, PostgreSQL
    backends) and its children that ended (autovacuum workers)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat.parent.name == str(pid):
            total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        elif fields[1] == str(pid):
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def run(store: str, target: str, args: argparse.Namespace, tokens: Path, db_pid: int | None = None,
        code: Path = ROOT, bound: CpuBound | None = None) -> dict:
    """One store's run with the service of checkout ``code``; ``db_pid`` is the PostgreSQL
    postmaster's, when it runs here (its CPU and its backends' is counted too)."""
    workers = args.workers if store == "postgresql" else 1
    # --admit-floor at the number of clients, not counted in time: never refused, so the rate is what it commits
    flags = _serve_help(code)
    floor = ["--admit-floor", str(args.clients)] if "--admit-floor" in flags else []
    floor += ["--admit-wait-ms", "0"] if "--admit-wait-ms" in flags else []
    server = Server(target, ["--auth", "token", "--tokens", str(tokens), "--pool", str(args.pool),
                             "--workers", str(workers), *floor], code=code).start()
    if bound:
        bound.add(server.proc.pid)
    try:
        gids, aids = _allocations(server.url, args.allocations)
        queue: mp.Queue = mp.Queue()
        chunks = [range(p, args.clients, args.procs) for p in range(args.procs)]
        procs = [mp.Process(target=_worker, args=(server.url, c, args.per_client, gids, store, queue))
                 for c in chunks]
        cpu0 = _cpu_seconds(server.proc.pid)
        db_cpu0 = _cpu_seconds(db_pid) if db_pid else 0.0
        t0 = time.perf_counter()
        for p in procs:
            p.start()
        answers = [queue.get() for _ in procs]
        wall = time.perf_counter() - t0
        results = [r for rs, _ in answers for r in rs]
        client_cpu = sum(cpu for _, cpu in answers)
        for p in procs:
            p.join()
        lat, codes, held, got = _tally(results, server.url, aids)
        server_cpu = _cpu_seconds(server.proc.pid) - cpu0
        db_cpu = _cpu_seconds(db_pid) - db_cpu0 if db_pid else None
        ledger = open_ledger(target, migrate=True)  # another checkout's service may have left an older schema
        audit = ledger.audit()
        ledger.close()
        n = len(lat)
        label = f"{store} ({workers} worker{'s' if workers > 1 else ''})"
        if args.code:
            label += f", {_describe(code)}"
        return {"store": label, "code": code, "requests": n, "seconds": wall,
                "rate": n / wall,
                "p50_ms": 1000 * lat[n // 2], "p99_ms": 1000 * lat[min(n - 1, int(n * 0.99))],
                "max_ms": 1000 * lat[-1], "codes": codes, "server_cpu_ms": 1000 * server_cpu / n,
                "db_cpu_ms": None if db_cpu is None else 1000 * db_cpu / n, "client_cpu_ms": 1000 * client_cpu / n,
                "consistent": got == held and not audit}
    finally:
        server.stop()


def _serve_help(code: Path) -> str:
    """``fairtop serve-allocations --help`` of checkout ``code`` (older ones lack newer flags)."""
    import subprocess

    return subprocess.run([sys.executable, "-m", "tui.cli", "serve-allocations", "--help"], cwd=code,
                          capture_output=True, text=True).stdout


def _describe(code: Path) -> str:
    """A checkout as ``name@commit``."""
    import subprocess

    done = subprocess.run(["git", "-C", str(code), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return f"{code.resolve().name}@{done.stdout.strip() or '?'}"


def _slow_flush_env(tmp: Path, ms: float) -> dict[str, str]:
    """The environment that makes PostgreSQL's every flush take ``ms`` (bench/slow_flush.c, built here)."""
    import subprocess

    lib = tmp / "slow_flush.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(lib), str(ROOT / "bench" / "slow_flush.c"), "-ldl"],
                   check=True)
    tmp.chmod(0o755)
    lib.chmod(0o755)
    return {"LD_PRELOAD": str(lib), "SLOW_FLUSH_US": str(int(ms * 1000))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", choices=("sqlite", "postgresql", "both"), default="both")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--per-client", type=int, default=1000)
    ap.add_argument("--allocations", type=int, default=8, help="projects the clients spread over (default 8)")
    ap.add_argument("--procs", type=int, default=2, help="client processes (default 2)")
    ap.add_argument("--pool", type=int, default=8, help="the service's PostgreSQL connections per worker")
    ap.add_argument("--workers", type=int, default=1, help="service worker processes on PostgreSQL (default 1)")
    ap.add_argument("--pg", help="PostgreSQL server URL (default $FAIRTOP_TEST_PG or a throwaway cluster)")
    ap.add_argument("--flush-ms", type=float, help="start the throwaway PostgreSQL with every flush taking "
                    "this long (storage slower than this machine's; needs root and gcc; not with --pg)")
    ap.add_argument("--code", type=Path, action="append", default=[],
                    help="run the service from this checkout; repeat to compare checkouts in one run")
    ap.add_argument("--overload", type=float, metavar="FACTOR",
                    help="after the closed-loop run, offer FACTOR times the rate it measured, open loop, for "
                         "--seconds; report what was accepted, refused, its latency and the service's memory")
    ap.add_argument("--seconds", type=float, default=10.0, help="length of the --overload run (default 10)")
    ap.add_argument("--admit-floor", type=int, help="the service's --admit-floor in the --overload run "
                    "(default: the service's default)")
    ap.add_argument("--admit-wait-ms", type=float, help="the service's --admit-wait-ms in the --overload run "
                    "(default: the service's default; a checkout without the flag runs without it)")
    ap.add_argument("--cpu-quota", type=float, metavar="PERCENT",
                    help="bound the service (or with --bound database, the throwaway PostgreSQL) to PERCENT of "
                         "one core (a cgroup CFS quota; root): the closed-loop rate is then what one bounded "
                         "instance commits, and --overload offers a multiple of that from clients that have "
                         "the rest of the machine")
    ap.add_argument("--bound", choices=("service", "database"), default="service",
                    help="what --cpu-quota bounds (default the service; database: PostgreSQL's server and its "
                         "backends, the store as the bottleneck)")
    args = ap.parse_args()
    if args.flush_ms and (args.pg or os.environ.get("FAIRTOP_TEST_PG")):
        ap.error("--flush-ms starts its own PostgreSQL: leave out --pg and $FAIRTOP_TEST_PG")
    load = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="fairtop-bench-"))
    tokens = write_tokens(tmp / "tokens.toml")
    cluster = None
    rows = []
    bound = CpuBound(args.cpu_quota) if args.cpu_quota else None
    own_pg = not (args.pg or os.environ.get("FAIRTOP_TEST_PG"))
    if bound and args.bound == "database" and (args.store != "postgresql" or not own_pg):
        ap.error("--bound database needs --store postgresql and the throwaway cluster (no --pg)")
    service_bound = bound if args.bound == "service" else None
    try:
        codes = args.code or [ROOT]
        if args.store in ("sqlite", "both"):
            rows += [run("sqlite", str(tmp / f"ledger{i}.db"), args, tokens, code=code, bound=service_bound)
                     for i, code in enumerate(codes)]
        if args.store in ("postgresql", "both"):
            pg = args.pg or os.environ.get("FAIRTOP_TEST_PG")
            if not pg:
                cluster = PgCluster(_slow_flush_env(tmp, args.flush_ms) if args.flush_ms else None).start()
                pg = cluster.url
                if bound and not service_bound:  # its backends, forked later, stay in the group
                    for pid in [cluster.postmaster_pid(), *_child_pids(cluster.postmaster_pid())]:
                        bound.add(pid)
            rows += [run("postgresql", create_database(pg), args, tokens, code=code,
                         db_pid=cluster.postmaster_pid() if cluster else None, bound=service_bound) for code in codes]
        if args.overload:  # every checkout offered the same: a multiple of their mean closed-loop rate
            mean = {s: sum(r["rate"] for r in rows if r["store"].startswith(s))
                    / max(1, sum(r["store"].startswith(s) for r in rows)) for s in ("sqlite", "postgresql")}
            over = [overload(store, str(tmp / f"over{i}.db") if store == "sqlite"
                             else create_database(args.pg or os.environ.get("FAIRTOP_TEST_PG") or cluster.url),
                             args, tokens, mean[store], service_bound, r["code"])
                    for i, r in enumerate(rows) for store in [r["store"].split(" ")[0]]]
    finally:
        if cluster:
            cluster.stop()
        if bound:
            bound.close()
    print(f"{args.clients} clients x {args.per_client} pre-debits over {args.allocations} allocation(s), "
          f"{args.procs} client processes, {os.cpu_count()} CPUs"
          + (f", PostgreSQL flush {args.flush_ms:g} ms" if args.flush_ms else "")
          + (f", the {args.bound} bounded to {args.cpu_quota:g} % of a core" if args.cpu_quota else ""))
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; after: "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print("| store | pre-debits | seconds | pre-debits/s | p50 ms | p99 ms | max ms | CPU ms/req: service |"
          " PostgreSQL | clients | answers | consistent |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|:---:|")
    for r in rows:
        db = "-" if r["db_cpu_ms"] is None else f"{r['db_cpu_ms']:.2f}"
        print(f"| {r['store']} | {r['requests']:,} | {r['seconds']:.1f} | {r['rate']:,.0f} | {r['p50_ms']:.1f} | "
              f"{r['p99_ms']:.1f} | {r['max_ms']:.1f} | {r['server_cpu_ms']:.2f} | {db} | {r['client_cpu_ms']:.2f} | "
              f"{r['codes']} | {'yes' if r['consistent'] else 'NO'} |")
    if args.overload:
        print(f"\nopen loop at {args.overload:g} x the closed-loop rate for {args.seconds:g} s, "
              f"--admit-floor {args.admit_floor or 'default'}, --admit-wait-ms "
              f"{'default' if args.admit_wait_ms is None else f'{args.admit_wait_ms:g}'}, load average now "
              + " ".join(f"{x:.2f}" for x in os.getloadavg()))
        print("| store | asked/s | offered/s | late | accepted/s | refused/s | p50 ms | p99 ms | max ms |"
              " p99 ms after 1 s | in the service | service CPU % | RSS MB before / max / after | answers |"
              " consistent |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|:---:|")
        for o in over:
            print(f"| {o['store']} | {o['asked']:,.0f} | {o['offered']:,.0f} | {o['late']:,} | {o['accepted']:,.0f} | "
                  f"{o['refused']:,.0f} | {o['p50_ms']:.1f} | {o['p99_ms']:.1f} | {o['max_ms']:.1f} | "
                  f"{o['p99_after_1s_ms']:.1f} | "
                  + ("-" if o["service_p99_after_1s_ms"] is None else f"{o['service_p99_after_1s_ms']:.1f}")
                  + f" | {o['cpu_pct']:.0f} | "
                  f"{o['rss_before']:.0f} / {o['rss_max']:.0f} / {o['rss_after']:.0f} | {o['codes']} | "
                  f"{'yes' if o['consistent'] else 'NO'} |")
        if not all(o["consistent"] and set(o["codes"]) <= {201, 503} for o in over):
            return 1
    return 0 if all(r["consistent"] and set(r["codes"]) <= {201, 503} for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
