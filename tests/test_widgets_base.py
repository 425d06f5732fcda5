"""The widgets' shared drawing conventions: one TPU / GPU colour code, defined once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from accelkit import chips
from accelkit.widgets import _base
from accelkit.widgets._base import GPU_COLOUR, TPU_COLOUR, vendor_colour

WIDGETS = Path(_base.__file__).parent
_CODE = {c.lower() for shades in _base._SHADES.values() for c in shades}


def _modules() -> list[Path]:
    return [p for p in sorted(WIDGETS.glob("*.py")) if p.name != "_base.py"]


def _draws_chips(text: str) -> bool:
    return bool(re.search(r"from accelkit import .*\bchips\b|import accelkit\.chips", text))


def test_the_chip_drawing_modules_are_found():
    assert {p.name for p in _modules() if _draws_chips(p.read_text(encoding="utf-8"))} >= {
        "roofline.py", "energy_price.py", "inference.py"}


def test_tpu_and_gpu_colours_are_defined_only_in_the_base_module():
    # Modules that draw chips take the code from _base (no literal of its hues, which would
    # also read as TPU or GPU when used for anything else); modules of lessons 01-04, which
    # draw no catalog chip, keep their own palettes.
    offenders = []
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        if not _draws_chips(text):
            continue
        for hexcode in re.findall(r"#[0-9a-fA-F]{6}", text):
            if hexcode.lower() in _CODE:
                offenders.append(f"{path.name}: {hexcode}")
        # A chip coloured by its kind must ask vendor_colour, not pick a literal.
        if re.search(r"""kind\s*==\s*["']tpu["']\s*else\s*["']#""", text):
            offenders.append(f"{path.name}: colour chosen by kind with a literal")
    assert not offenders, offenders


def test_modules_that_colour_chips_use_the_shared_code():
    for name in ("roofline.py", "energy_price.py", "inference.py", "flexibility.py"):
        text = (WIDGETS / name).read_text(encoding="utf-8")
        assert "vendor_colour" in text or "TPU_COLOUR" in text, name


def test_every_chip_gets_its_kinds_hue_and_the_hues_do_not_mix():
    tpu, gpu = set(_base._SHADES["tpu"]), set(_base._SHADES["gpu"])
    assert not tpu & gpu and TPU_COLOUR in tpu and GPU_COLOUR in gpu
    for chip in chips.all():
        family = tpu if chip.kind == "tpu" else gpu
        assert {vendor_colour(chip, i) for i in range(9)} <= family
        assert vendor_colour(chip.name) == vendor_colour(chip)
    assert vendor_colour("TPU v5e") == TPU_COLOUR and vendor_colour("H100") == GPU_COLOUR


def test_a_chip_of_no_known_kind_is_refused_by_name():
    class Odd:
        kind = "fpga"

    with pytest.raises(ValueError, match="kind"):
        vendor_colour(Odd())


def test_perf_per_watt_bars_follow_the_code_and_carry_the_key():
    from matplotlib.colors import to_hex

    from accelkit.widgets import perf_per_watt

    from matplotlib.text import Text

    w = perf_per_watt()
    figure = w.view.figure
    ax = figure.axes[0]
    # the y tick labels are drawn as texts placed at their bars' heights (widgets/_axes.Ticks)
    names = {text.get_position()[1]: text.get_text() for text in figure.artists
             if isinstance(text, Text) and text.get_visible()}
    assert len(ax.patches) >= 10
    filled = outlined = 0
    for bar in ax.patches:
        label = names[bar.get_y() + bar.get_height() / 2]
        chip = next(c for c in chips.all() if c.watts is not None
                    and c.name.replace("NVIDIA ", "").split(" (")[0] == label)
        if bar.get_facecolor()[3] == 0:  # the datasheet peak: an outline in the vendor's colour
            outlined += 1
            assert to_hex(bar.get_edgecolor()) == vendor_colour(chip)
            assert bar.get_width() == pytest.approx(chip.peak_flops() / chip.watts / 1e12)
        else:  # the measured (or, hatched, assumed) matmul rate: filled
            filled += 1
            assert to_hex(bar.get_facecolor()) == vendor_colour(chip)
            assert bar.get_width() == pytest.approx(chip.achievable_flops() / chip.watts / 1e12)
            assert bool(bar.get_hatch()) == chip.achievable_is_assumption("achievable_flops:bf16")
    assert filled == outlined >= 5
    keys = {t.get_text(): to_hex(t.get_color()) for t in figure.texts}
    assert keys["■ TPU"] == TPU_COLOUR and keys["■ GPU"] == GPU_COLOUR
