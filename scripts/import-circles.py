#!/usr/bin/env python3
"""Lists import circles between the files of each crate: file A names `crate::…` items
of file B, B names items of A (directly or through others). Prints each circle with the
names that tie it and exits 1 if there is one, 0 if there is none.

Usage: python3 scripts/import-circles.py [CRATE_DIR ...]   (default: crates/*)

Edges are the `crate::a::b::…` paths a file uses (in `use` lines and in code), resolved
to the longest module path that is a file of the crate (`a/b.rs`, `a/b/mod.rs`, `a.rs`,
`a/mod.rs`). Comments and test modules (`#[cfg(test)] mod … { … }`, `tests.rs`) are ignored. `mod x;` declarations, `super::` and paths relative
to a module are not edges: a parent declaring its children is how a tree is built, not
a dependency between equals.
"""
import os
import re
import sys

PATH = re.compile(r"\bcrate((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\bcrate::((?:[A-Za-z_][A-Za-z0-9_]*::)*)\{([^}]*)\}")


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
    for path in modules.values():
        text = strip_test_modules(strip_comments(open(path, encoding="utf-8").read()))
        paths = [m.group(1).strip(":").split("::") for m in PATH.finditer(text)]
        for m in GROUP.finditer(text):
            prefix = [p for p in m.group(1).split("::") if p]
            for item in m.group(2).split(","):
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


def main():
    crates = sys.argv[1:] or sorted(
        os.path.join("crates", c) for c in os.listdir("crates")
    )
    found = 0
    for crate in crates:
        src = os.path.join(crate, "src")
        if not os.path.isdir(src):
            continue
        modules, edges = edges_of(src)
        for component in circles(sorted(modules.values()), edges):
            found += 1
            print(f"circle in {crate}: {len(component)} files")
            for a in component:
                for b in component:
                    names = edges.get(a, {}).get(b)
                    if names:
                        print(f"  {a} -> {b}: {', '.join(sorted(names))}")
    if found:
        print(f"{found} import circle(s)")
        return 1
    print(f"no import circles in {len(crates)} crates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
