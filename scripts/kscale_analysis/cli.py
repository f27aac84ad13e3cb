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


def write_together(files):
    """Write each (path, bytes) of files through a temp file beside it,
    then rename them all: a file that cannot be written (a read-only
    directory, a full disk) leaves every path as it was."""
    temps = []
    try:
        for path, data in files:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            temps.append(temp_path(path))
            with open(temps[-1], "wb") as f:
                f.write(data)
    except OSError:
        for tmp in temps:
            os.unlink(tmp)
        raise
    for tmp, (path, _) in zip(temps, files):
        os.replace(tmp, path)


def failure(func, argv):
    """Call func(argv): None, or (message, exit status) of how it failed."""
    try:
        func(argv)
        sys.stdout.flush()
    except KscaleError as e:
        return str(e), e.status
    except BrokenPipeError:
        # the reader left: nothing more reaches it, not even at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return "output closed (broken pipe)", 1
    except OSError as e:
        return f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}", 1
    except KeyboardInterrupt:
        return "interrupted", 130
    return None


def run(prog, func, argv):
    """Call func(argv); print KscaleError as 'prog: message' and return its
    status.  No traceback either for what the world does to a command: its
    output closed (`| head -1`: 1), Ctrl-C (130), a file it cannot read or
    write (read-only, a full disk, a missing directory: 1), each one line;
    its files go through temp files, so none is half-written."""
    failed = failure(func, argv)
    if not failed:
        return 0
    try:
        print(f"{prog}: {KscaleError(failed[0])}", file=sys.stderr)
    except OSError:
        pass
    return failed[1]
