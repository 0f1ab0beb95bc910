import subprocess
import sys

from ansel.models.hparams import ARCHS
from ansel.models.registry import builders


def test_every_architecture_has_hyperparameters_and_a_builder():
    assert set(builders()) == set(ARCHS)


def test_resolving_every_model_config_does_not_import_torch():
    # The Snakefile resolves every model's config at start-up (twice per SLURM job).
    code = ("import sys; from ansel.config import load, model_config; c = load(preset='full'); "
            "[model_config(c, m) for m in c['models']]; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
