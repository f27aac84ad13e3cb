"""The one list of models (scripts/kscale_analysis/models.py) against the
experiment definitions that name models: each model has a run in
configs/default.conf, configs/oversubscribe.conf and configs/predict.conf."""

import os
import unittest

from kscale_analysis.models import MODELS

from . import REPO

# The configs that run every model (docs/adding-a-model.md).
EVERY_MODEL = ("default", "oversubscribe", "predict")


def benches(config):
    """The benches the run lines of configs/CONFIG.conf name."""
    with open(os.path.join(REPO, "configs", config + ".conf")) as f:
        return {line.split()[2] for line in f if line.startswith("run ")}


class ModelsTest(unittest.TestCase):
    def test_the_list_reads_models_meson_build(self):
        for name in MODELS:
            self.assertTrue(os.path.isdir(os.path.join(REPO, "models", name)), name)

    def test_every_model_runs(self):
        for config in EVERY_MODEL:
            with self.subTest(config=config):
                missing = [m for m in MODELS if m not in benches(config)]
                self.assertEqual(missing, [], f"configs/{config}.conf runs no "
                                 f"{', '.join(missing)}: add a run line")
