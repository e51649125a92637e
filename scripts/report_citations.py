#!/usr/bin/env python3
"""The CXL report's lines that trinity cites by number ("L772", "L773-775"), resolved in docs/sources.md.

    scripts/report_citations.py --write   # rewrite the table from the report's text
    scripts/report_citations.py --check   # what the tests run

Comments and preset sources in include/, tools/, bench/ and tests/ cite the report (arXiv:2507.07223) by line
of its plain text, kept beside this repository as ../shared/papers/cxl-communication-tax-report.txt. That text is
not shipped, so docs/sources.md carries each cited range with the opening of its text, between the markers
below. --check fails on a citation the table lacks (anywhere: it needs only the checkout) and, where the report's
text is at hand, on a row whose text is not the report's.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
REPORT = ROOT.parent / "shared" / "papers" / "cxl-communication-tax-report.txt"
PAGE = ROOT / "docs" / "sources.md"
BEGIN = "<!-- report lines: scripts/report_citations.py --write -->"
END = "<!-- end report lines -->"
CITE = re.compile(r"\bL(\d{2,4})(?:[–-]L?(\d{2,4}))?\b")
SHOWN = 150  # characters of a range's text the table shows


def citations():
    found = {}
    for folder in ("include", "tools", "bench", "tests"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".hpp", ".cpp", ".cuh", ".cu", ".h") or not path.is_file():
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for m in CITE.finditer(line):
                    first = int(m.group(1))
                    last = int(m.group(2)) if m.group(2) else first
                    if last < first:
                        sys.exit(f"{path.relative_to(ROOT)}:{n}: L{first}-{last} runs backwards")
                    found.setdefault((first, last), f"{path.relative_to(ROOT)}:{n}")
    return found


def label(first, last):
    return f"L{first}" if first == last else f"L{first}–{last}"


def excerpt(lines, first, last):
    text = " ".join(l.strip() for l in lines[first - 1:last] if l.strip())
    text = text.replace("|", "\\|")
    return text if len(text) <= SHOWN else text[:SHOWN].rstrip() + " …"


def table(found, lines):
    rows = ["| lines | the report's text there (its opening) |", "|---|---|"]
    for first, last in sorted(found):
        rows.append(f"| {label(first, last)} | {excerpt(lines, first, last)} |")
    return "\n".join(rows)


def region(page):
    if BEGIN not in page or END not in page:
        sys.exit(f"docs/sources.md has no region between '{BEGIN}' and '{END}'")
    start = page.index(BEGIN) + len(BEGIN)
    return start, page.index(END)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    found = citations()
    page = PAGE.read_text(encoding="utf-8")
    start, end = region(page)
    if args.write:
        if not REPORT.exists():
            sys.exit(f"--write needs the report's text at {REPORT}")
        lines = REPORT.read_text(encoding="utf-8").splitlines()
        for (first, last), where in found.items():
            if last > len(lines):
                sys.exit(f"{where}: {label(first, last)} is past the report's {len(lines)} lines")
        PAGE.write_text(page[:start] + "\n" + table(found, lines) + "\n" + page[end:], encoding="utf-8")
        print(f"report_citations.py: {len(found)} cited ranges written to docs/sources.md")
        return
    listed = page[start:end]
    missing = [f"{where}: {label(*r)}" for r, where in sorted(found.items()) if f"| {label(*r)} |" not in listed]
    if missing:
        sys.exit("docs/sources.md does not list these citations of the report (run scripts/report_citations.py "
                 "--write beside ../shared):\n  " + "\n  ".join(missing))
    if REPORT.exists():
        lines = REPORT.read_text(encoding="utf-8").splitlines()
        if listed.strip() != table(found, lines).strip():
            sys.exit("docs/sources.md's report lines differ from the report's text or list a range no longer "
                     "cited: run scripts/report_citations.py --write")
    print(f"report_citations.py: all {len(found)} cited ranges of the report resolve in docs/sources.md"
          + ("" if REPORT.exists() else " (the report's text is not here: its excerpts were not compared)"))


if __name__ == "__main__":
    main()
