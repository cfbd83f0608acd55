#!/usr/bin/env python3
"""Lists import circles in each crate, at two levels:

- between files: file A names items of file B, B names items of A (directly or through
  others);
- between a crate's top-level modules, each folder (or file) under `src/` counted as one:
  `server/` names `tools/`, and something in `tools/` names `server/` back. File-level
  checks miss these when the files that tie the folders differ.

Prints each circle with the names that tie it. Known circles are listed in
`scripts/import-circles-expected.txt`, strict both ways (a habit taken from rmcp's
conformance baseline): a circle not listed fails, and so does a listed one that is gone,
so the list can only shrink with the code. Exits 1 on either, 0 otherwise.

Usage: python3 scripts/import-circles.py [CRATE_DIR ...]   (default: crates/*)

Edges are the `crate::a::b::…`, `super::…` and `self::…` paths a file uses (in `use`
lines and in code), resolved to the longest module path that is a file of the crate
(`a/b.rs`, `a/b/mod.rs`, `a.rs`, `a/mod.rs`). Comments and test modules
(`#[cfg(test)] mod … { … }`, `tests.rs`) are ignored. `mod x;` declarations are not
edges: a parent declaring its children is how a tree is built, not a dependency
between equals. Items of the crate root (`crate::Foo`, re-exported by lib.rs) are not
edges either.
"""
import os
import re
import sys

# `crate::a::b`, `super::a`, `super::super::a`, `self::a`: the anchor, then the segments.
ANCHOR = r"\b(crate|(?:super::)*super|self)"
PATH = re.compile(ANCHOR + r"((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(ANCHOR + r"::((?:[A-Za-z_][A-Za-z0-9_]*::)*)\{([^}]*)\}")
EXPECTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "import-circles-expected.txt")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    # A `//` after a space or at the start of a line (not the one of a URL in a string).
    return "\n".join(re.sub(r"(^|\s)//.*$", "", line) for line in text.splitlines())


def strip_test_modules(text):
    """Drops `#[cfg(test)] mod name { … }` blocks: tests may reach anywhere."""
    out, pos = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text):
        if m.start() < pos:
            continue
        out.append(text[pos : m.start()])
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        pos = i
    out.append(text[pos:])
    return "".join(out)


def module_of_file(src, path):
    """The module path (a tuple) of a file under `src`."""
    parts = os.path.relpath(path, src)[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def base_of(anchor, module):
    """The module an anchored path starts from, in the file of module `module`."""
    if anchor == "crate":
        return ()
    if anchor == "self":
        return module
    ups = anchor.count("super")
    return module[: max(len(module) - ups, 0)]


def module_files(src):
    """Maps module paths (tuples) to files under `src`."""
    modules = {}
    for root, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            if name == "tests.rs":
                continue  # a `#[cfg(test)] mod tests;` of its parent
            rel = os.path.relpath(os.path.join(root, name), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            modules[tuple(parts)] = os.path.join(src, rel)
    return modules


def resolve(modules, segments):
    for n in range(len(segments), 0, -1):
        key = tuple(segments[:n])
        if key in modules:
            return modules[key], segments[n] if n < len(segments) else segments[-1]
    return None, None


def edges_of(src):
    modules = module_files(src)
    edges = {}
    for module, path in modules.items():
        text = strip_test_modules(strip_comments(open(path, encoding="utf-8").read()))
        paths = [
            list(base_of(m.group(1), module)) + m.group(2).strip(":").split("::")
            for m in PATH.finditer(text)
        ]
        for m in GROUP.finditer(text):
            prefix = list(base_of(m.group(1), module))
            prefix += [p for p in m.group(2).split("::") if p]
            for item in m.group(3).split(","):
                item = item.strip().split(" as ")[0].strip()
                if item and item != "self":
                    paths.append(prefix + item.split("::"))
        for segments in paths:
            target, name = resolve(modules, segments)
            if target and target != path:
                edges.setdefault(path, {}).setdefault(target, set()).add(name)
    return modules, edges


def circles(nodes, edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def top_level(src, modules, edges):
    """The file edges collapsed to the crate's top-level modules (the crate root's own
    file is left out: it declares and re-exports everything)."""
    top = {path: module[0] for module, path in modules.items() if module}
    folded = {}
    for a, targets in edges.items():
        for b, names in targets.items():
            ta, tb = top.get(a), top.get(b)
            if ta and tb and ta != tb:
                tied = folded.setdefault(ta, {}).setdefault(tb, set())
                rel = os.path.relpath(a, src)
                tied.update(f"{rel}: {n}" for n in names)
    return sorted(set(top.values())), folded


def load_expected():
    """The known circles: one line each, `CRATE_DIR LEVEL MEMBER MEMBER ...`."""
    if not os.path.exists(EXPECTED):
        return set()
    lines = open(EXPECTED, encoding="utf-8").read().splitlines()
    return {l.strip() for l in lines if l.strip() and not l.startswith("#")}


def main():
    crates = sys.argv[1:] or sorted(
        os.path.join("crates", c) for c in os.listdir("crates")
    )
    found = set()
    for crate in crates:
        src = os.path.join(crate, "src")
        if not os.path.isdir(src):
            continue
        modules, edges = edges_of(src)
        for component in circles(sorted(modules.values()), edges):
            rels = [os.path.relpath(f, src) for f in component]
            found.add(f"{crate} files {' '.join(rels)}")
            print(f"circle in {crate}: {len(component)} files")
            for a in component:
                for b in component:
                    names = edges.get(a, {}).get(b)
                    if names:
                        print(f"  {a} -> {b}: {', '.join(sorted(names))}")
        nodes, folded = top_level(src, modules, edges)
        for component in circles(nodes, folded):
            found.add(f"{crate} modules {' '.join(component)}")
            print(f"circle in {crate} between top-level modules: {', '.join(component)}")
            for a in component:
                for b in component:
                    names = folded.get(a, {}).get(b)
                    if names:
                        shown = sorted(names)
                        more = f" (+{len(shown) - 3} more)" if len(shown) > 3 else ""
                        print(f"  {a} -> {b}: {'; '.join(shown[:3])}{more}")
    expected = {e for e in load_expected() if e.split(" ")[0] in crates}
    new, gone = sorted(found - expected), sorted(expected - found)
    for line in new:
        print(f"NEW circle (not in {os.path.basename(EXPECTED)}): {line}")
    for line in gone:
        print(f"GONE: {line} is listed in {os.path.basename(EXPECTED)} but no longer found: remove the line")
    if new or gone:
        return 1
    known = len(found)
    print(f"no new import circles in {len(crates)} crates (files and top-level modules; {known} known, listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
