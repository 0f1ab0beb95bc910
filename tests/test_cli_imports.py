"""Data, table and figure jobs start without torch (~2 s of every such job otherwise)."""
import subprocess
import sys


def test_commands_that_run_no_model_do_not_import_torch():
    modules = ["ansel.cli", "ansel.data.download", "ansel.data.preprocess", "ansel.data.registry",
               "ansel.embeddings", "ansel.report.tables", "ansel.report.figures", "ansel.report.deviations",
               "ansel.targets", "ansel.config"]
    code = f"import sys; {'; '.join(f'import {m}' for m in modules)}; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
