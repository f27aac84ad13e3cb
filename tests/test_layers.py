#!/usr/bin/python3
"""The tree's floors, of includes and of calls: tests/test_layers.py SRCDIR BUILDDIR

docs/layout.md draws the floors, bottom up: lib/sys, lib/kernel, lib/sim,
lib/harness, models/, then bench/ and torture/ side by side.  A file may
include and call only its own floor and those below, and no two files may
need each other, directly or round a circle.  This test checks that:

- includes: every `#include "..."` of a file under those directories
  names a file of its floor or one below, and no circle of includes joins
  two files;
- lib/kernel names nothing of the simulator's (`sim_`): the simulator's
  build overrides lib/kernel's native definitions from its force-included
  header, as an architecture's headers override asm-generic's;
- calls: in each build of the sources (native, torture, simulated, each
  sanitizer), read from the objects with nm(1), every symbol a file uses
  that one other file of the same build defines is an edge; no edge goes
  up a floor and no circle of edges joins two files.  The simulator's
  build compiles lib/sys, lib/kernel, models/ and bench/ under lib/sim's
  overrides (every atomic and thread-local a call into lib/sim): those
  calls are the override itself and are not edges.

It reads the objects meson's compile_commands.json names: run it after a
build.  Exit 0, or 1 with a line per failure.
"""
import collections
import json
import os
import re
import subprocess
import sys

FLOORS = (('lib/sys/', 0), ('lib/kernel/', 1), ('lib/sim/', 2),
          ('lib/harness/', 3), ('models/', 4), ('bench/', 5),
          ('torture/', 5))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def floor(path):
    for prefix, n in FLOORS:
        if path.startswith(prefix):
            return n
    return None


def circles(edges):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(100000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def check_edges(what, edges, failures):
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if floor(b) > floor(a):
                failures.append(f'{what}: {a} -> {b} goes up a floor')
    for comp in circles(edges):
        failures.append(f'{what}: a circle: {" <-> ".join(comp)}')


def sources(src):
    for top in ('lib', 'models', 'bench', 'torture'):
        for d, _, names in os.walk(os.path.join(src, top)):
            for name in names:
                if name.endswith(('.c', '.h', '.cc')):
                    yield os.path.relpath(os.path.join(d, name), src)


def check_includes(src, failures):
    edges = collections.defaultdict(set)
    for path in sources(src):
        with open(os.path.join(src, path), encoding='utf-8') as f:
            text = f.read()
        for name in INCLUDE.findall(text):
            target = os.path.normpath(
                os.path.join(os.path.dirname(path), name))
            if floor(target) is not None and target != path:
                edges[path].add(target)
        if path.startswith('lib/kernel/') and re.search(r'\bsim_', text):
            failures.append(f'{path}: names the simulator (sim_)')
    check_edges('includes', edges, failures)


def build_of(command):
    """Which build of the sources a compile command is part of."""
    if '-DKSCALE_SIM' in command:
        mode = 'sim'	# --sim=here's measures too, uninstrumented
    elif '-DKSCALE_TORTURE' in command:
        mode = 'torture'
    else:
        mode = 'native'
    for san in ('thread', 'address'):
        if f'-fsanitize={san}' in command:
            return f'{mode}, {san} sanitizer'
    return mode


def symbols(objects):
    """({object: defined}, {object: undefined}) from one nm(1) over all."""
    out = subprocess.run(['nm', '-A', *objects],
                         capture_output=True, text=True, check=True).stdout
    defined = collections.defaultdict(set)
    undefined = collections.defaultdict(set)
    for line in out.splitlines():
        where, _, rest = line.rpartition(':')
        parts = rest.split()
        if parts[-2:-1] == ['U']:
            undefined[where].add(parts[-1])
        elif len(parts) == 3 and parts[1] in 'TDBRVWGSCI':
            defined[where].add(parts[2])
    return defined, undefined


def check_calls(src, build, failures):
    with open(os.path.join(build, 'compile_commands.json')) as f:
        commands = json.load(f)
    builds = collections.defaultdict(dict)
    for c in commands:
        path = os.path.relpath(os.path.join(c['directory'], c['file']), src)
        obj = os.path.join(c['directory'], c['output'])
        if floor(path) is not None and os.path.exists(obj):
            builds[build_of(c['command'])][obj] = path
    if 'native' not in builds:
        failures.append(f'{build}: no objects: build it first')
    for name, objs in sorted(builds.items()):
        defined, undefined = symbols(sorted(objs))
        owner = collections.defaultdict(set)
        for obj, syms in defined.items():
            for s in syms:
                owner[s].add(objs[obj])
        edges = collections.defaultdict(set)
        for obj, syms in undefined.items():
            user = objs[obj]
            for s in syms:
                if len(owner.get(s, ())) != 1:
                    continue
                (target,) = owner[s]
                if target == user:
                    continue
                if (name.startswith('sim') and target.startswith('lib/sim/') and
                        floor(user) != floor(target)):
                    continue	# the simulator's overrides
                edges[user].add(target)
        check_edges(f'calls ({name} build)', edges, failures)


def main():
    src, build = sys.argv[1], sys.argv[2]
    failures = []
    check_includes(src, failures)
    check_calls(src, build, failures)
    for line in failures:
        print(line)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
