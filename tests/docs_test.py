#!/usr/bin/env python3
"""Runs the commands that README.md and docs/*.md show, so none can rot.

A fenced block is run when the line before it (blank lines aside) is

    <!-- doc-test exit=N expect="a line part" expect="another" [timeout=S] -->

The block is one bash script (`set -e` off: the exit code checked is the last
command's), run from a scratch folder that holds links to the build tree
(`build`) and to the repository's `examples/`, `tests/` and `src/`, so the documented
paths work as a newcomer types them and whatever the commands write stays in
the scratch folder. Each `expect` must appear in stdout or stderr.

A block that would run a tool (a line starting with `build/bin/`) must carry
either that marker or `<!-- doc-test skip="why" -->`: an example nobody runs
is said to be one.

    docs_test.py SOURCE_DIR BINARY_DIR
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

MARK = re.compile(r"^<!--\s*doc-test\b(.*?)-->\s*$")
TOOL_LINE = re.compile(r"^\s*(eval \"\$\()?build/bin/")


def blocks(path):
    """(line number, marker attributes or None, code lines) for each fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i, pending = [], 0, None
    while i < len(lines):
        line = lines[i]
        m = MARK.match(line.strip())
        if m:
            pending = (i + 1, m.group(1))
        elif line.startswith("```"):
            start = i + 1
            body = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append((start, pending, body))
            pending = None
        elif line.strip():
            pending = None  # a marker belongs to the block right after it
        i += 1
    return out


def parse_marker(text, where):
    attrs = {"expect": []}
    for word in shlex.split(text):
        key, eq, value = word.partition("=")
        if not eq:
            raise SystemExit(f"{where}: doc-test attribute '{word}': expected key=value")
        if key == "expect":
            attrs["expect"].append(value)
        elif key in ("exit", "timeout", "skip"):
            attrs[key] = value
        else:
            raise SystemExit(f"{where}: doc-test attribute '{key}': expected exit, expect, timeout or skip")
    return attrs


def main():
    src, binary = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    pages = [os.path.join(src, "README.md")]
    docs = os.path.join(src, "docs")
    pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    failures, ran, skipped = [], 0, 0
    env = dict(os.environ)
    env.pop("OPSCOPE_PLUGINS", None)  # the commands load what they name, nothing more
    env["NO_COLOR"] = "1"
    for page in pages:
        rel = os.path.relpath(page, src)
        for line, marker, body in blocks(page):
            where = f"{rel}:{line}"
            runs_tool = any(TOOL_LINE.match(l) for l in body)
            if marker is None:
                if runs_tool:
                    failures.append(f"{where}: a block that runs a tool has no doc-test marker "
                                    "(run it, or say why not with skip=\"...\")")
                continue
            attrs = parse_marker(marker[1], where)
            if "skip" in attrs:
                if not attrs["skip"].strip():
                    failures.append(f"{where}: doc-test skip needs a reason")
                skipped += 1
                continue
            if "exit" not in attrs:
                failures.append(f"{where}: doc-test needs exit=N")
                continue
            with tempfile.TemporaryDirectory(prefix="opscope_doc_") as scratch:
                os.symlink(binary, os.path.join(scratch, "build"))
                for d in ("examples", "tests", "src", "tools"):
                    os.symlink(os.path.join(src, d), os.path.join(scratch, d))
                try:
                    p = subprocess.run(["bash", "-c", "\n".join(body)], cwd=scratch, env=env,
                                       capture_output=True, text=True, errors="replace",
                                       timeout=float(attrs.get("timeout", 120)))
                except subprocess.TimeoutExpired:
                    failures.append(f"{where}: still running after {attrs.get('timeout', 120)} s")
                    continue
            ran += 1
            text = p.stdout + p.stderr
            problems = []
            if p.returncode != int(attrs["exit"]):
                problems.append(f"exit {p.returncode}, the page says {attrs['exit']}")
            problems += [f"no line holds '{e}'" for e in attrs["expect"] if e not in text]
            if problems:
                failures.append(f"{where}: " + "; ".join(problems) + "\n--- output ---\n" + text[-4000:])
    print(f"docs_test: {ran} blocks run, {skipped} skipped with a reason, {len(failures)} failed")
    for f in failures:
        print("FAILED " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
