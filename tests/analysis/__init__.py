"""Tests for scripts/kscale_analysis (`kscale compare`, `kscale plot`).

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s tests/analysis -t .
"""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(REPO, "scripts")
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
RUN_A = os.path.join(FIXTURES, "run_a.json")
RUN_B = os.path.join(FIXTURES, "run_b.json")

if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)


def run_cli(tool, *args, env=None):
    """Run scripts/kscale-<tool> the way the bash CLI execs it."""
    full_env = {k: v for k, v in os.environ.items() if k != "KSCALE_GNUPLOT"}
    full_env.update(env or {})
    return subprocess.run([os.path.join(SCRIPTS, f"kscale-{tool}"), *args],
                          capture_output=True, text=True, env=full_env, timeout=60)
