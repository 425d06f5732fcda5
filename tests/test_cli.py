"""The accelkit command line: tables on stdout, one-line errors with exit code 2."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from accelkit import cli


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_chips_lists_every_catalog_chip(capsys: pytest.CaptureFixture[str]) -> None:
    import accelkit as ak
    code, out, err = run(capsys, "chips")
    assert code == 0 and err == ""
    for chip in ak.chips.all():
        assert chip.name in out
    assert "ridge" in out and "240.5" in out  # v5e ridge, 1.97e14 / 8.19e11


def test_models_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "models")
    assert code == 0 and "llama-3-70b" in out and "70.554" in out


def test_roofline(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "roofline", "--chip", "v5e", "--m", "4096", "--n", "4096",
                       "--k", "4096")
    assert code == 0
    assert "compute" in out and "240.5 FLOPs/byte" in out
    code, out, _ = run(capsys, "roofline", "--chip", "v5e", "--m", "8", "--n", "4096",
                       "--k", "4096")
    assert "memory" in out


def test_train_reproduces_the_scaling_book(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "train", "--model", "llama-3-70b", "--tokens", "15e12",
                       "--chip", "v5p", "--chips", "8960", "--mfu", "0.4")
    assert code == 0
    assert "6.35e+24" in out and "44.7" in out and "fits" in out


def test_train_with_params_and_batch(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "train", "--params", "7e9", "--tokens", "2e12", "--chip",
                       "H100", "--chips", "512", "--batch-tokens", "4e6")
    assert code == 0 and "all-reduce dominates below" in out and "MWh" in out


def test_serve(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "serve", "--model", "llama-3-70b", "--chip", "v5e", "--chips",
                       "16", "--batch", "32", "--context", "8192")
    assert code == 0
    assert "prefill" in out and "decode" in out and "memory" in out and "KV cache" in out


def test_serve_a_model_that_does_not_fit_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "serve", "--model", "llama-3.1-405b", "--chip", "v5e")
    assert code == 0 and "does not fit" in out and "at least" in out


@pytest.mark.parametrize("argv", [
    ["train", "--model", "llama-9", "--tokens", "1e12", "--chip", "v5p"],
    ["train", "--model", "llama-3-8b", "--tokens", "1e12", "--chip", "v5p", "--mfu", "1.5"],
    ["train", "--model", "llama-3-8b", "--tokens", "1e12", "--chip", "v5p", "--mfu", "0"],
    ["train", "--model", "llama-3-8b", "--tokens", "nan", "--chip", "v5p"],
    ["train", "--model", "llama-3-8b", "--tokens", "-5", "--chip", "v5p"],
    ["train", "--model", "llama-3-8b", "--params", "8e9", "--tokens", "1", "--chip", "v5p"],
    ["train", "--tokens", "1e12", "--chip", "v5p"],
    ["roofline", "--chip", "nope", "--m", "1", "--n", "1", "--k", "1"],
    ["roofline", "--chip", "v5e", "--m", "0", "--n", "1", "--k", "1"],
    ["roofline", "--chip", "v5e", "--m", "x", "--n", "1", "--k", "1"],
    ["serve", "--model", "resnet-50", "--chip", "v5e"],
    ["serve", "--model", "llama-3-8b", "--chip", "v5e", "--batch", "0"],
    ["serve", "--model", "llama-3-8b", "--chip", "v5e", "--chips", "-2"],
    ["serve", "--model", "llama-3-8b", "--chip", "v5e", "--kv-dtype", "fp64"],
    ["teleport"], [],
])
def test_bad_arguments_one_line_exit_2(capsys: pytest.CaptureFixture[str],
                                       argv: list[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0] and "Traceback" not in err


def test_help_teaches_with_examples(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "examples:" in out and "accelkit train --model llama-3-70b" in out
    assert "ridge point" in out
    code, out, _ = run(capsys, "serve", "--help")
    assert code == 0 and "--context" in out


def test_installed_console_script() -> None:
    script = shutil.which("accelkit", path=str(Path(sys.executable).parent))
    assert script is not None, "console script not installed: pip install -e ."
    ok = subprocess.run([script, "train", "--model", "llama-3-70b", "--tokens", "15e12",
                         "--chip", "v5p", "--chips", "8960", "--mfu", "0.4"],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "44.7" in ok.stdout
    bad = subprocess.run([script, "train", "--model", "llama-3-70b", "--tokens", "15e12",
                          "--chip", "v5p", "--mfu", "7"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
