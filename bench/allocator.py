"""What the app's glibc malloc settings (tui/app/allocator.py) cost per capture shown: CPU
seconds to turn a 20,000- and a 2,000-association capture into what the app draws (read the
folder, build the standing, build the tree table: the load worker's work), and of the
``malloc_trim(0)`` after each, with and without the fixed mmap threshold, each setting in a
fresh interpreter, alternating, so a loaded machine weighs on both alike.

    .venv/bin/python bench/allocator.py [--loads 20] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import json, os, sys, time
from pathlib import Path
sys.path.insert(0, ".")
from tests.app.follow import capture_of
from tests.resources import rss_kb
from tui.analysis.standing import build_standing
from tui.app import allocator
from tui.app.main import build_app
from tui.app.tree_rows import TreeTable
from tui.cli import build_parser
from tui.sources.publish import CURRENT, publish_once
root, loads, tuned = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "tuned"
if tuned:
    assert allocator.keep_large_blocks_mapped()
captures = [capture_of(20_000), capture_of(2_000)]
publish_once(root, captures[0], keep=3)
app = build_app(build_parser().parse_args(["--from", str(root / CURRENT), "--user", "user1"]))
load_s = trim_s = 0.0
held = None
for k in range(loads):
    publish_once(root, captures[k % 2], keep=3)
    t0 = time.process_time()
    snapshot = app.loader()
    standing = build_standing(snapshot, app.me)
    held = (standing, TreeTable.from_standing(standing))  # the last one stays shown, as in the app
    t1 = time.process_time()
    if tuned:
        allocator.return_free_memory()
    load_s, trim_s = load_s + t1 - t0, trim_s + time.process_time() - t1
print(json.dumps({"load_s": load_s / loads, "trim_s": trim_s / loads, "rss_mb": rss_kb(os.getpid()) / 1024}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loads", type=int, default=20, help="captures loaded per interpreter (20,000 and 2,000 in turn)")
    ap.add_argument("--rounds", type=int, default=3, help="interpreters per setting, alternating")
    args = ap.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"default": [], "tuned": []}
    for _ in range(args.rounds):
        for setting in runs:
            with tempfile.TemporaryDirectory(prefix="fairtop-alloc-") as tmp:
                argv = [sys.executable, "-c", _CHILD, str(Path(tmp) / "published"), str(args.loads), setting]
                out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True).stdout
            runs[setting].append(json.loads(out))
    print(f"{args.loads} captures per interpreter, {args.rounds} interpreters per setting\n")
    print("| glibc malloc | CPU s per capture loaded (each interpreter) | malloc_trim CPU ms | RSS MB at the end |")
    print("|---|---|---:|---:|")
    for setting, rows in runs.items():
        loads = ", ".join(f"{r['load_s']:.3f}" for r in rows)
        trim = max(r["trim_s"] for r in rows) * 1000
        rss = ", ".join(f"{r['rss_mb']:.0f}" for r in rows)
        print(f"| {setting} | {loads} | {trim:.1f} | {rss} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
