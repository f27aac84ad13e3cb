"""kscale result analysis: `kscale compare` and `kscale plot`.

Reads Google Benchmark 1.7 JSON written by the kscale benchmarks; standard
library plus scipy (Mann-Whitney U) and an external gnuplot for plots.
"""
