"""The models: the names of model_sources in models/meson.build, the one
list that builds each model's bench, torture and validation
(docs/adding-a-model.md).  What else iterates the models reads them here:
kscale vm-test's benches, kscale sim-validate's runs, the configs' tests
and the config fuzzer's stand-in binaries."""

import os
import re

from .results import KscaleError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
MESON = os.path.join(ROOT, "models", "meson.build")


def names(path=MESON):
    """The model names, in the order models/meson.build has them: the
    keys of model_sources, a tab in (`\t'<model>' : files(`)."""
    with open(path) as f:
        text = f.read()
    block = re.search(r"^model_sources = \{\n(.*?)^\}", text, re.M | re.S)
    found = re.findall(r"^\t'(\w+)'\s*:", block.group(1), re.M) if block else []
    if not found:
        raise KscaleError(f"{path}: no model_sources entries", 1)
    return found


MODELS = names()
