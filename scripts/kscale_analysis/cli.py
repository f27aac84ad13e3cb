"""Shared command-line plumbing: one-line errors, metric lists, JSON reads, atomic writes."""

import argparse
import json
import os
import sys
import tempfile

from .results import KscaleError


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports bad options as a KscaleError (one line, exit 2)."""

    def error(self, message):
        raise KscaleError(f"{message} (see --help)")


def metric_list(values, default):
    """Flatten repeated and comma-separated --metric values, dropping duplicates."""
    metrics = []
    for value in values or default:
        for metric in value.split(","):
            metric = metric.strip()
            if not metric:
                raise KscaleError("empty --metric name")
            if metric not in metrics:
                metrics.append(metric)
    return metrics


def temp_path(final_path):
    """A fresh temp file next to final_path, to be os.replace()d onto it;
    it gets the permissions a plain open() would give (mkstemp uses 0600)."""
    directory, base = os.path.split(final_path)
    fd, path = tempfile.mkstemp(dir=directory or ".", prefix=f".{base}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    os.close(fd)
    return path


def read_json_if_any(path):
    """A JSON file's document, or None where there is no such file; a
    file that cannot be read or parsed is a KscaleError."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise KscaleError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None


def write_atomic(path, text):
    """Write text to path through a temp file renamed onto it: a reader
    sees the old file or the whole new one, never a part."""
    tmp = temp_path(path)
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        os.unlink(tmp)
        raise


def run(prog, func, argv):
    """Call func(argv); print KscaleError as 'prog: message' and return its status."""
    try:
        func(argv)
    except KscaleError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return e.status
    return 0
