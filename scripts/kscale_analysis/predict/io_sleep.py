"""kscale predict's sleeping I/O: how long an operation sleeps on a disk,
as the model reports it, and which holds it sleeps in."""

from ..results import KscaleError
from .series import key_label, median_of

IO_COUNTERS = ("io_sleep_ns_per_op", "io_read_ns")


def io_per_op(key, rows):
    """(ns per operation a thread sleeps on I/O, ns a read): the medians of
    the counters io_sleep_ns_per_op and io_read_ns, which any model may
    report (the read's length tells the holds the sleep can be in)."""
    sleep, read = (median_of(rows, name) for name in IO_COUNTERS)
    for name, got in zip(IO_COUNTERS, (sleep, read)):
        if got is not None and got < 0:
            raise KscaleError(f"{key_label(key)}: {name} is {got:g} in its 1-thread "
                              "rows: times are >= 0")
    if sleep and read is None:
        raise KscaleError(f"{key_label(key)}: io_sleep_ns_per_op without io_read_ns "
                          "in its 1-thread rows")
    return sleep or 0.0, read or 0.0


def place_io(resources, io, read):
    """Put the I/O sleep inside the exclusive holds long enough to hold a
    read (as real_lookup reads an inode under its directory's i_mutex),
    longest first; return what is left outside them."""
    for r in sorted(resources, key=lambda r: -r.hold):
        if io <= 0 or r.scope == "cpu" or r.hold < read or not r.visits:
            continue
        r.io_share = min(r.hold, io / r.visits)
        io -= r.io_share * r.visits
    return max(0.0, io)
