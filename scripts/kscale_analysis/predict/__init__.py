"""kscale predict: each variant's scaling to 512 CPUs, from its 1-thread profile.

A run made with --profile records, per operation, what it does to each
shared resource (res_NAME_visits, _hold_ns, _wait_ns, _lines,
_instances, _sleeps; rwsems also _read_visits and _read_hold_ns) and the
machine's cache-line transfer latencies (context kscale_line_ns_*).  From
the 1-thread rows alone this package builds a closed queueing network per
variant and solves it by exact mean value analysis (mva.py) at each
thread count N:

- N customers (threads); a delay centre: the time per operation nobody
  waits for (the operation's private work, reader holds, sleeping I/O);
- a FIFO centre per instance of each shared class, with demand
  visits x (hold + lines x L(N) x P(N)) / instances: L(N) the mean
  one-way line transfer latency between the CPUs N threads get when
  placed compactly on the machine, P(N) = (m - 1) / m the chance that a
  visit finds the line last used on another of the m CPUs in use;
- above C threads, the CPU: a load-dependent centre with C servers.

It validates that model first, predicting every measured count of this
machine from the 1-thread rows, then prints each variant's rate per CPU
at 1, 2, 4 ... 512 CPUs, and for each seed (configs/seed-scale.tsv) the
predicted after/before ratio on the seed's machine beside the seed's
figure.  docs/predict.md says what it assumes and where it must not be
trusted; usl.py fits Gunther's law where a variant has three CPU counts.

By concern, each module using only those above it:
series    the results' rows, by variant and thread count
machine   machine files, this machine, compact placement's line latency
io_sleep  the sleeping I/O an operation reports, placed in its holds
profile   a variant's resource classes and scopes from its res_* counters
network   the queueing network at N threads and its prediction
validate  the prediction against each measured thread count; USL fits
seeds     the seed-scale file and each seed's predicted ratio
report    the tables, as text and markdown
figures   the gnuplot plots
command   the command line
"""

from .command import PROG, main

__all__ = ["PROG", "main"]
