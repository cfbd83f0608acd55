#!/usr/bin/env python3
"""Holds docs/layout.md to the crates as they are.

- Every folder under `crates/` is named in the page's first block (`crates/NAME  what`),
  and every `crates/NAME` the block names exists.
- The page's dependency block (a `text` block of lines `NAME  dep, dep, … (notes)`) lists,
  for each crate, exactly the workspace crates its `[dependencies]` name (normal
  dependencies; dev-dependencies are test-only and not layering). `a leaf` and `(none…)`
  mean no workspace dependency; a note in parentheses is ignored.

So a crate that starts to depend on another one sideways or upward shows up in review as
a change of this page, not only as a line in a Cargo.toml.

Usage: python3 scripts/layout-check.py   (exits 1 with each difference, 0 when they agree)
"""
import os
import re
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "layout.md")
PREFIX = "mcp-tasks-"


def short(package):
    """`mcp-tasks-store` -> `store`; the facade `mcp-tasks` keeps its name."""
    return package[len(PREFIX):] if package.startswith(PREFIX) else package


def crates():
    """Each crate's short name -> the short names of the workspace crates it depends on."""
    found = {}
    base = os.path.join(ROOT, "crates")
    for folder in sorted(os.listdir(base)):
        manifest = os.path.join(base, folder, "Cargo.toml")
        if not os.path.isfile(manifest):
            continue
        with open(manifest, "rb") as f:
            data = tomllib.load(f)
        deps = data.get("dependencies", {})
        found[short(data["package"]["name"])] = (
            folder,
            {short(name) for name in deps if name == "mcp-tasks" or name.startswith(PREFIX)},
        )
    return found


def blocks(text):
    """The fenced blocks of the page, in order: (info string, lines)."""
    return [(m.group(1).strip(), m.group(2).splitlines())
            for m in re.finditer(r"```([^\n]*)\n(.*?)```", text, flags=re.S)]


def documented_deps(lines):
    """The dependency block's lines: name -> set of names."""
    documented = {}
    for line in lines:
        if not line.strip():
            continue
        m = re.match(r"(\S+)(?: \(facade\))?\s{2,}(.*)$", line)
        if not m:
            raise SystemExit(f"docs/layout.md: cannot read the dependency line {line!r}")
        name, rest = m.group(1), m.group(2)
        listed = rest.split("(")[0].split(":")[0]
        names = {part.strip() for part in listed.split(",") if part.strip()}
        names.discard("a leaf")
        documented[name] = names
    return documented


def main():
    with open(PAGE, encoding="utf-8") as f:
        text = f.read()
    found = crates()
    problems = []
    fenced = blocks(text)
    if len(fenced) < 2:
        raise SystemExit("docs/layout.md: expected the tree block and the dependency block")
    named = {m.group(1) for line in fenced[0][1] if (m := re.match(r"crates/(\S+)", line))}
    folders = {folder for folder, _ in found.values()}
    for folder in sorted(folders - named):
        problems.append(f"crates/{folder} is not described in the page's first block")
    for folder in sorted(named - folders):
        problems.append(f"the page describes crates/{folder}, which does not exist")
    dep_block = next((lines for info, lines in fenced if info == "text"), None)
    if dep_block is None:
        raise SystemExit("docs/layout.md: no ```text block of dependencies")
    documented = documented_deps(dep_block)
    for name, (_, deps) in sorted(found.items()):
        if name not in documented:
            problems.append(f"{name}: not in the dependency block (it depends on {sorted(deps) or 'nothing'})")
        elif documented[name] != deps:
            problems.append(
                f"{name}: the page says {sorted(documented[name]) or 'nothing'}, "
                f"Cargo.toml says {sorted(deps) or 'nothing'}")
    for name in sorted(set(documented) - set(found)):
        problems.append(f"the dependency block names {name}, which is not a crate")
    for p in problems:
        print(f"docs/layout.md: {p}")
    if problems:
        print("Update docs/layout.md (or the dependency) so that they agree.")
        return 1
    print(f"docs/layout.md agrees with the {len(found)} crates and their dependencies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
