"""Make the expected result of every case: the project's batch checker, run on a copy
before and after the case's diff.

    python3 bench/corpus/truth.py [--projects rich,go-cmp] [--cases rename,...]

For each project: fetch it if needed, copy it, run its batch checker once on the
pristine copy, then for each case apply the diff with `git apply`, run the checker
again, and keep the errors no equal error stood at before (common.new_errors). The
result goes into `cases/<project>/<case>.json` under "expected", next to the case's
hand-written fields (description, what it covers, breaking or clean), which are kept.
The files are committed so the scorer need not run the checker twice per case; this
script regenerates them (a new pin, a new case, a new checker version).

A project whose `diffs_from` names another (mobx-ts7 reuses mobx's diffs) gets its
hand-written fields from that project's case file the first time.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (CorpusError, apply_diff, edited_paths, make_copy, new_errors,  # noqa: E402
                    parse_diff, restore, run_checker)
from fetch import FetchError, fetch  # noqa: E402
from projects import Project, select  # noqa: E402

HAND_FIELDS = ("description", "covers", "kind", "expect_exit")


def dump_case(case: dict) -> str:
    """Indented JSON with each expected error on one line, so a diff of two truths reads."""
    text = json.dumps(case, indent=1)
    one = re.compile(r'\[\s+("(?:[^"\\]|\\.)*"),\s+(\d+),\s+("(?:[^"\\]|\\.)*")\s+\]')
    return one.sub(r"[\1, \2, \3]", text) + "\n"


def case_names(p: Project, only: set[str] | None) -> list[str]:
    names = sorted(d.stem for d in p.diff_dir.glob("*.diff"))
    return [n for n in names if not only or n in only]


def load_case(p: Project, name: str) -> dict:
    path = p.case_dir / f"{name}.json"
    if path.exists():
        return json.loads(path.read_text())
    src = p.diff_dir / f"{name}.json"
    if p.diffs_from and src.exists():
        return {k: v for k, v in json.loads(src.read_text()).items() if k in HAND_FIELDS}
    raise CorpusError(f"{path.relative_to(p.case_dir.parent.parent)} is missing: write its "
                      "description, covers and kind first")


def truth_for(p: Project, names: list[str], scratch: Path) -> None:
    root = make_copy(p, scratch)
    before = run_checker(p, root)
    print(f"truth: {p.name}: {p.checker_label}: {len(before.errors)} errors before "
          f"({before.seconds:.1f}s)", file=sys.stderr)
    for name in names:
        case = load_case(p, name)
        diff_path = p.diff_dir / f"{name}.diff"
        diffs = parse_diff(diff_path.read_text())
        apply_diff(root, diff_path)
        try:
            after = run_checker(p, root)
        finally:
            restore(root)
        new = new_errors(before.errors, after.errors, diffs)
        edited = sorted(edited_paths(diffs))
        case["expected"] = {
            "checker": p.checker_label,
            "pin": p.source,
            "errors_before": len(before.errors),
            "errors_after": len(after.errors),
            "edited": edited,
            "new_errors": [list(e) for e in sorted(new)],
            "new_in_other_files": sum(1 for e in new if e[0] not in edited),
        }
        kind = case.get("kind")
        if kind == "clean" and new:
            print(f"truth: {p.name}/{name}: marked clean but the checker finds {len(new)} new "
                  "errors", file=sys.stderr)
        if kind == "breaking" and not new:
            print(f"truth: {p.name}/{name}: marked breaking but the checker finds nothing new",
                  file=sys.stderr)
        p.case_dir.mkdir(parents=True, exist_ok=True)
        (p.case_dir / f"{name}.json").write_text(dump_case(case))
        files = len({e[0] for e in new})
        print(f"truth: {p.name}/{name}: {len(new)} new errors in {files} files "
              f"({case['expected']['new_in_other_files']} outside the edited files)",
              file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--projects", help="comma-separated subset (default: all)")
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    args = ap.parse_args()
    only = set(args.cases.split(",")) if args.cases else None
    status = 0
    t0 = time.monotonic()
    for p in select(args.projects):
        try:
            fetch(p, force=False)
            with tempfile.TemporaryDirectory(prefix=f"corpus-truth-{p.name}-") as tmp:
                truth_for(p, case_names(p, only), Path(tmp))
        except (CorpusError, FetchError) as e:
            print(f"truth: {p.name}: {e}", file=sys.stderr)
            status = 1
    print(f"truth: done in {time.monotonic() - t0:.0f}s", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
