#!/usr/bin/python3
"""The docs against the binaries: tests/test_docs.py SRCDIR BENCH...

For each bench binary BENCH (build/bench/<model>), `BENCH --list` prints

    workload NAME doc
    variant  NAME doc
    knob     NAME doc (default D)
    flag     NAME doc (default D)      (once the bench prints flags)

and docs/models/<model>.md must document exactly those variants and
knobs, no more and no fewer, with the same knob defaults, and each model
variant's lock: a model row's line ends `(kernel K, lock L)`, and the
`lock` column of its doc row names L in backticks (`-` for a host row).  Every bench
takes the same flags: where a bench prints `flag` lines, the flag table of
docs/bench-flags.md must list exactly those, with their defaults; where
it prints none, exactly the flags of its --help's "Common options" (but
Google Benchmark's --benchmark_*).  Every workload is named in backticks
in its model's doc.  Last, every relative link in README.md and docs/ and
every path in backticks under one of the tree's top directories must
exist.

The tables are markdown tables; the first cell of the header row says
what a table lists, and a file has at most one table of each kind:

    | variant | what it is | code it follows | lock |     docs/models/<model>.md
    | knob | default | meaning |                    docs/models/<model>.md
    | flag | default | meaning |                    docs/bench-flags.md

A row's name is the first backticked span of its first cell, as a user
writes it: `none`, `--path-work-ns=N\\|auto`, `--profile[=true\\|false]`.
For knobs and flags a leading `--` is dropped and the name ends at `=` or
`[`; a knob's `-` are `_` (its --list name).  The default is the backticked
value of the `default` column, as --list prints it (`-`: the binary prints
no default).  Exit 0, or 1 with a line a difference.
"""
import os
import re
import subprocess
import sys

LIST_LINE = re.compile(r'^  (workload|variant|knob|flag)\s+(\S+)\s*(.*)$')
DEFAULT = re.compile(r'\(default ([^()]*)\)$')
LOCK = re.compile(r'\(kernel [^ ,()]+, lock ([^ ,()]+)\)$')
TOP_DIRS = ('lib/', 'models/', 'bench/', 'torture/', 'tests/', 'scripts/',
            'configs/', 'lkp/', 'docs/', '.ci/')
PLACEHOLDER = re.compile(r'[*<{]|NAME|TARGET|MODEL|CONFIG|LABEL')

errors = []


def error(msg):
    errors.append(msg)
    print('test_docs: ' + msg)


def bench_list(binary):
    """{kind: {name: default or None}} from `binary --list`."""
    out = subprocess.run([binary, '--list'], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    seen = {'workload': {}, 'variant': {}, 'knob': {}, 'flag': {}}
    for line in out.splitlines():
        m = LIST_LINE.match(line)
        if m:
            d = (LOCK if m.group(1) == 'variant' else DEFAULT).search(
                m.group(3))
            seen[m.group(1)][m.group(2)] = d.group(1) if d else None
    return seen


def help_flags(binary):
    """The names of --help's "Common options", without --benchmark_*."""
    out = subprocess.run([binary, '--help'], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    common = out.split('Common options:', 1)[1].split('\n\n', 1)[0]
    return {m.group(1) for m in re.finditer(r'^  --([a-z][a-z_-]*)', common,
                                              re.M)
            if not m.group(1).startswith('benchmark_')}


def cells(row):
    return [c.strip() for c in re.split(r'(?<!\\)\|', row.strip())[1:-1]]


def tables(path):
    """{kind: [(name cell, {column: cell})...]} of path's markdown tables."""
    found = {}
    lines = open(path, encoding='utf-8').read().split('\n')
    i = 0
    while i < len(lines):
        if not (lines[i].startswith('|') and i + 1 < len(lines)
                and re.match(r'^\|(\s*:?-+:?\s*\|)+$', lines[i + 1])):
            i += 1
            continue
        head = cells(lines[i])
        rows = []
        i += 2
        while i < len(lines) and lines[i].startswith('|'):
            rows.append(dict(zip(head, cells(lines[i]))))
            i += 1
        kind = head[0]
        if kind in ('variant', 'knob', 'flag'):
            if kind in found:
                error(f'{path}: two {kind} tables')
            found[kind] = rows
    return found


def row_name(kind, cell):
    m = re.search(r'`([^`]+)`', cell)
    if not m:
        return None
    name = m.group(1)
    if kind in ('knob', 'flag'):
        name = re.split(r'[=\[]', name.removeprefix('--'), 1)[0]
    if kind == 'knob':
        name = name.replace('-', '_')
    return name


def documented(path, kind, rows):
    """{name: default} of a table's rows, errors for malformed rows."""
    names = {}
    for row in rows:
        name = row_name(kind, row[kind])
        if not name:
            error(f'{path}: {kind} row without a `name`: {row[kind]}')
            continue
        if name in names:
            error(f'{path}: {kind} {name} documented twice')
        column = 'lock' if kind == 'variant' else 'default'
        cell = row.get(column, '')
        m = re.search(r'`([^`]+)`', cell)
        default = m.group(1) if m else cell.strip()
        if not default:
            error(f'{path}: {kind} {name} has no {column} column')
        elif default == '-':
            default = None
        names[name] = default
    return names


def compare(path, kind, who, listed, docs, defaults=True):
    """listed against docs ({name: default}); who printed listed."""
    for name in sorted(set(listed) - set(docs)):
        error(f'{path}: {kind} {name} is missing ({who} has it)')
    for name in sorted(set(docs) - set(listed)):
        error(f'{path}: {kind} {name} is extra ({who} has no such {kind})')
    if not defaults:
        return
    what = 'lock' if kind == 'variant' else 'default'
    for name in sorted(set(listed) & set(docs)):
        if listed[name] != docs[name]:
            error(f'{path}: {kind} {name}: {what} {docs[name]}, but '
                  f'{who} says {listed[name]}')


def check_bench(src, binary):
    model = os.path.basename(binary)
    rel = f'docs/models/{model}.md'
    path = os.path.join(src, rel)
    if not os.path.exists(path):
        error(f'{rel}: missing: {model} has no doc')
        return None
    seen = bench_list(binary)
    found = tables(path)
    for kind in ('variant', 'knob'):
        docs = documented(rel, kind, found.get(kind, []))
        compare(rel, kind, f'{model} --list', seen[kind], docs)
    text = open(path, encoding='utf-8').read()
    for name in seen['workload']:
        if f'`{name}`' not in text:
            error(f'{rel}: workload {name} is not named')

    if seen['flag']:
        return 'list', tuple(sorted(seen['flag'].items()))
    return 'help', tuple(sorted(dict.fromkeys(help_flags(binary)).items()))


def check_flags(src, flag_sets):
    """Each distinct set of flags the binaries take against the table."""
    rel = 'docs/bench-flags.md'
    docs = documented(rel, 'flag',
                      tables(os.path.join(src, rel)).get('flag', []))
    for (how, flags), models in flag_sets.items():
        compare(rel, 'flag', f"{', '.join(models)} --{how}", dict(flags),
                docs, defaults=how == 'list')


def check_references(src):
    files = ['README.md'] + sorted(
        os.path.relpath(os.path.join(d, f), src)
        for d, _, fs in os.walk(os.path.join(src, 'docs'))
        for f in fs if f.endswith('.md'))
    for rel in files:
        text = open(os.path.join(src, rel), encoding='utf-8').read()
        here = os.path.dirname(rel)
        for target in re.findall(r'\]\(([^)\s]+)\)', text):
            if re.match(r'^[a-z]+:', target):
                continue
            target = target.split('#', 1)[0]
            if target and not os.path.exists(
                    os.path.join(src, here, target)):
                error(f'{rel}: link to {target}: no such file')
        for span in re.findall(r'`([^`\n]+)`', text):
            word = span.split()[0].split(':', 1)[0]
            if (word.startswith(TOP_DIRS) and not PLACEHOLDER.search(word)
                    and not os.path.exists(os.path.join(src, word))):
                error(f'{rel}: `{word}`: no such file')


def main():
    if len(sys.argv) < 3:
        print('usage: test_docs.py SRCDIR BENCH...', file=sys.stderr)
        return 2
    src = sys.argv[1]
    flag_sets = {}
    for binary in sys.argv[2:]:
        flags = check_bench(src, binary)
        if flags:
            flag_sets.setdefault(flags, []).append(os.path.basename(binary))
    check_flags(src, flag_sets)
    check_references(src)
    if errors:
        print(f'test_docs: {len(errors)} difference(s)')
        return 1
    print(f'test_docs: {len(sys.argv) - 2} binaries match their docs')
    return 0


if __name__ == '__main__':
    sys.exit(main())
