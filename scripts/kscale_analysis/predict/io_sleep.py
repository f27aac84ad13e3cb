"""kscale predict's sleeping I/O: how long an operation sleeps on a disk,
and which holds it sleeps in."""

import re

from .series import median_of


def io_per_op(knobs, rows):
    """(ns per operation a thread sleeps on the model disk, ns a read):
    the fs_io_us knob times the reads per operation (the dentry cache's
    misses, less those the inode cache serves)."""
    io_us = dict(knobs).get("fs_io_us")
    if not io_us or not re.fullmatch(r"[0-9]{1,9}", io_us) or int(io_us) == 0:
        return 0.0, 0.0
    reads = 1.0
    for ratio in ("dcache_hit_ratio", "icache_hit_ratio"):
        hit = median_of(rows, ratio)
        if hit is not None:
            reads *= 1.0 - min(1.0, max(0.0, hit))
    return int(io_us) * 1000.0 * reads, int(io_us) * 1000.0


def place_io(resources, io, read):
    """Put the I/O sleep inside the exclusive holds long enough to hold a
    read (real_lookup reads the inode under the directory's i_mutex),
    longest first; return what is left outside them."""
    for r in sorted(resources, key=lambda r: -r.hold):
        if io <= 0 or r.scope == "cpu" or r.hold < read or not r.visits:
            continue
        r.io_share = min(r.hold, io / r.visits)
        io -= r.io_share * r.visits
    return max(0.0, io)
