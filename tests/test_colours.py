"""The TPU and GPU colours stay apart under the common colour-vision deficiencies, by simulation.

Every figure codes a chip's kind by colour (accelkit/widgets/_base.py: ``TPU_COLOUR``,
``GPU_COLOUR``, and ``vendor_colour``'s shades when several chips of a kind share a figure), so a
reader must be able to tell any TPU shade from any GPU shade. Checked for protanopia,
deuteranopia and tritanopia (full severity) and normal vision:

* simulation: Machado, Oliveira & Fernandes (2009), "A Physiologically-based Model for Simulation
  of Color Vision Deficiency", IEEE TVCG 15(6):1291-1298: a 3×3 matrix per deficiency applied to
  linear sRGB; the severity-1.0 matrices of the paper's table;
* difference: CIEDE2000 (CIE 142-2001) in CIELAB under D65, implemented as in Sharma, Wu & Dalal
  (2005), "The CIEDE2000 color-difference formula: implementation notes, supplementary test data,
  and mathematical observations", Color Res. Appl. 30(1):21-30, and checked here against that
  paper's test pairs;
* threshold: 10 CIEDE2000 units, a named choice: about four times the just-noticeable difference
  (~2.3), so two marks read as different colours at a glance and in a legend, not only side by side.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from accelkit import chips
from accelkit.widgets._base import GPU_COLOUR, TPU_COLOUR, vendor_colour

MINIMUM_DE2000 = 10.0

MACHADO_2009 = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                   [0.004733, 0.691367, 0.303900]],
}


def _srgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255


def _linear(c: np.ndarray) -> np.ndarray:
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _gamma(c: np.ndarray) -> np.ndarray:
    c = np.clip(c, 0, 1)
    return np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055)


def simulate(hex_colour: str, deficiency: str | None) -> np.ndarray:
    """The sRGB colour a reader with ``deficiency`` sees (None: normal vision)."""
    rgb = _srgb(hex_colour)
    if deficiency is None:
        return rgb
    return _gamma(np.array(MACHADO_2009[deficiency]) @ _linear(rgb))


def lab(rgb: np.ndarray) -> tuple[float, float, float]:
    to_xyz = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
                       [0.0193339, 0.1191920, 0.9503041]])
    t = to_xyz @ _linear(rgb) / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def ciede2000(lab1, lab2) -> float:
    """CIEDE2000 colour difference (kL = kC = kH = 1), as in Sharma, Wu & Dalal (2005)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean ** 7 / (c_mean ** 7 + 25 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dl, dc = l2 - l1, c2p - c1p
    if c1p * c2p == 0:
        dh = 0.0
    else:
        dh = h2p - h1p
        dh = dh - 360 if dh > 180 else dh + 360 if dh < -180 else dh
    d_big_h = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    l_mean, cp_mean = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_mean = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_mean = (h1p + h2p) / 2
    else:
        h_mean = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(h_mean - 30)) + 0.24 * math.cos(math.radians(2 * h_mean))
         + 0.32 * math.cos(math.radians(3 * h_mean + 6)) - 0.20 * math.cos(math.radians(4 * h_mean - 63)))
    d_theta = 30 * math.exp(-(((h_mean - 275) / 25) ** 2))
    r_c = 2 * math.sqrt(cp_mean ** 7 / (cp_mean ** 7 + 25 ** 7))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    s_c, s_h = 1 + 0.045 * cp_mean, 1 + 0.015 * cp_mean * t
    r_t = -math.sin(math.radians(2 * d_theta)) * r_c
    return math.sqrt((dl / s_l) ** 2 + (dc / s_c) ** 2 + (d_big_h / s_h) ** 2
                     + r_t * (dc / s_c) * (d_big_h / s_h))


@pytest.mark.parametrize("lab1, lab2, expected", [
    # Sharma, Wu & Dalal (2005), Table 1: pairs 1, 2, 3, 4, 7, 17 and 25.
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 3.1571, -77.2803), (50.0, 0.0, -82.7485), 2.8615),
    ((50.0, 2.8361, -74.0200), (50.0, 0.0, -82.7485), 3.4412),
    ((50.0, -1.3802, -84.2814), (50.0, 0.0, -82.7485), 1.0000),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
])
def test_ciede2000_matches_sharmas_test_data(lab1, lab2, expected):
    assert ciede2000(lab1, lab2) == pytest.approx(expected, abs=1e-4)


def test_the_simulation_keeps_grey_grey_and_changes_what_it_should():
    # Machado's matrices keep neutral colours neutral (each row sums to 1).
    for deficiency, matrix in MACHADO_2009.items():
        assert np.allclose(np.sum(matrix, axis=1), 1.0, atol=2e-3), deficiency
    # Red and green, far apart to a normal eye, collapse for protanopia and deuteranopia.
    red, green = "#d62728", "#2ca02c"
    normal = ciede2000(lab(simulate(red, None)), lab(simulate(green, None)))
    for deficiency in ("protanopia", "deuteranopia"):
        assert ciede2000(lab(simulate(red, deficiency)), lab(simulate(green, deficiency))) < normal / 2


def _shades(kind: str) -> list[str]:
    """Every shade ``vendor_colour`` gives a chip of ``kind``, in order (until they repeat)."""
    chip = next(c for c in chips.all() if c.kind == kind)
    found: list[str] = []
    for shade in range(64):
        colour = vendor_colour(chip, shade)
        if colour in found:
            break
        found.append(colour)
    return found


@pytest.mark.parametrize("deficiency", [None, "protanopia", "deuteranopia", "tritanopia"])
def test_every_tpu_shade_stays_apart_from_every_gpu_shade(deficiency):
    tpu, gpu = _shades("tpu"), _shades("gpu")
    assert tpu[0] == TPU_COLOUR and gpu[0] == GPU_COLOUR and len(tpu) > 1 and len(gpu) > 1
    close = []
    for a in tpu:
        for b in gpu:
            difference = ciede2000(lab(simulate(a, deficiency)), lab(simulate(b, deficiency)))
            if difference < MINIMUM_DE2000:
                close.append((a, b, round(difference, 1)))
    assert not close, f"{deficiency or 'normal vision'}: TPU and GPU shades closer than {MINIMUM_DE2000}: {close}"
