"""Writes every fenced block of a Markdown file whose info string has `check=ID` to OUT/ID.

Usage: extract.py DOC OUT. ID may hold one `/` (client/file name). Prints the IDs; exits 1
when a block is left open or an ID repeats.
"""
import os
import re
import sys

doc, out = sys.argv[1], sys.argv[2]
fence = re.compile(r"^(`{3,})(.*)$")
seen, block, name, ticks = [], None, None, ""
for number, line in enumerate(open(doc, encoding="utf-8"), 1):
    if block is None:
        m = fence.match(line.rstrip("\n"))
        if m:
            ticks = m.group(1)
            ids = [w[len("check="):] for w in m.group(2).split() if w.startswith("check=")]
            block, name = [], (ids[0] if ids else None)
            if name is not None and (name in seen or name.startswith("/") or ".." in name):
                sys.exit(f"{doc}:{number}: bad or repeated check id {name!r}")
    elif line.rstrip("\n") == ticks:
        if name is not None:
            path = os.path.join(out, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write("".join(block))
            seen.append(name)
            print(name)
        block = None
    else:
        block.append(line)
if block is not None:
    sys.exit(f"{doc}: a fenced block is not closed")
