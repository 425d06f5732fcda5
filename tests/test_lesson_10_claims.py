"""Every quantitative claim in lessons/10_decision_lab.ipynb, recomputed with the library."""

from __future__ import annotations

import pytest

import accelkit as ak
from accelkit import scenarios, workloads

SAME_CLOUD = ["TPU v5e", "TPU v6e", "TPU v5p", "H100", "H200"]


def _ok(rows):
    return [o for o in rows if isinstance(o, scenarios.Outcome) and o.fits
            and o.meets_latency is not False]


def test_chatbot_meets_target_and_leaves_flops_idle():
    """All three meet the 50 ms target with room to spare, and all three leave most of their FLOPs idle."""
    for chip in ("TPU v5e", "H100", "B200"):
        o = scenarios.evaluate("chatbot", chip)
        assert o.meets_latency and o.latency_seconds < 0.5 * 0.050
        assert o.utilization < 0.2 and o.bound == "memory"


def test_halving_mfu_doubles_days_and_dollars():
    """For pre-training, drop MFU to 0.2 and watch days and dollars double."""
    for a, b in zip(scenarios.compare("pretrain", mfu=0.4), scenarios.compare("pretrain", mfu=0.2)):
        assert b.days == pytest.approx(2 * a.days, rel=0.01)
        assert b.usd == pytest.approx(2 * a.usd, rel=0.01)


def test_chatbot_batch_64_cheaper_and_still_under_target():
    """For the chatbot, set batch 1 and then 64 and watch the cost per token fall while latency stays under target."""
    for one, many in zip(scenarios.compare("chatbot", batch=1), scenarios.compare("chatbot", batch=64)):
        assert many.usd_per_million < one.usd_per_million / 10
        assert many.meets_latency


def test_lowest_price_h100_overtakes_every_tpu_offline():
    """For bulk inference, switch to the lowest sourced price and watch the H100 overtake every TPU."""
    list_rows = {o.chip: o for o in scenarios.compare("offline")}
    low_rows = {o.chip: o for o in scenarios.compare("offline", price_source="lowest")}
    h100 = ak.chips.get("H100").name
    tpus = [c for c in low_rows if c.startswith("TPU")]
    assert any(list_rows[c].usd < list_rows[h100].usd for c in tpus)
    assert all(low_rows[h100].usd < low_rows[c].usd for c in tpus)


def test_finetune_does_not_fit_on_v5e_but_fits_elsewhere():
    """For fine-tuning, look at the fits column: 16 bytes per parameter over 8 chips plus one
    sequence per chip in flight "fits a v6e but not a v5e"; "a v5e slice needs at least 9 chips'
    HBM for this job, so in practice a 16-chip slice"."""
    fits = {o.chip: o.fits for o in scenarios.compare("finetune")}
    assert not fits["TPU v5e"] and fits["TPU v6e (Trillium)"]
    assert fits["TPU v5p"] and fits["NVIDIA H100 (SXM)"]
    s = scenarios.SCENARIOS["finetune"]
    v5e = ak.training.estimate(model=s.model, tokens=s.work, chip="TPU v5e", n_chips=8,
                               mfu=s.mfu, batch_tokens=s.batch_tokens)
    assert v5e.microbatch_tokens == 8192 and v5e.min_chips_to_fit == 9
    assert scenarios.evaluate("finetune", "TPU v5e", n_chips=16).fits


def test_recommender_two_chips_does_not_fit_on_most():
    """For the recommender, set 2 chips per job (the tables stop fitting on most chips)."""
    rows = scenarios.compare("recommender", n_chips=2)
    assert sum(not o.fits for o in rows) > len(rows) / 2


def test_b200_cheapest_for_most_and_v6e_wins_pretraining_at_list():
    """The B200 at a GPU cloud's price is the cheapest for most jobs, and the TPU v6e at list price wins pre-training."""
    cheapest = {key: min(_ok(scenarios.compare(key)), key=lambda o: o.usd).chip
                for key in scenarios.SCENARIOS}
    assert cheapest["pretrain"] == "TPU v6e (Trillium)"
    assert sum(c == "NVIDIA B200 (HGX)" for c in cheapest.values()) >= 3
    assert ak.chips.get("TPU7x").usd_per_hour is None  # cannot be ranked


def test_same_cloud_a_tpu_is_cheapest_for_every_scenario():
    """On one cloud's list, a TPU is the cheaper way to do every one of the five jobs (every ratio above one)."""
    for key in scenarios.SCENARIOS:
        rows = [o for o in scenarios.compare(key, SAME_CLOUD) if o.fits]
        tpu = min(o.usd for o in rows if o.chip.startswith("TPU"))
        gpu = min(o.usd for o in rows if o.chip.startswith("NVIDIA"))
        assert gpu / tpu > 1, key
    for chip in ("TPU v5e", "TPU v5p", "H100"):  # the same price table
        assert "scaling book" in ak.chips.get(chip).price_source


def test_dlrm_is_almost_all_embeddings_and_toy_tpu_loses_per_area():
    """Over 99.9% of DLRM's parameters are embedding rows; the toy TPU spends almost all its time in its vector unit and loses per area."""
    m = ak.models.get("dlrm")
    assert m.embedding_params / m.params > 0.999
    c = workloads.compare("recommender_step")
    assert c.tpu_outside_matrix_share > 0.9 and c.winner_per_area == "GPU"
    assert c.tpu_outside_matrix_share > c.gpu_outside_matrix_share


def test_worked_problem_batch_beats_chip_choice():
    """Raising the batch within the latency target is worth more than the choice of chip (v5e vs H100)."""
    v5e, h100 = scenarios.evaluate("chatbot", "v5e"), scenarios.evaluate("chatbot", "H100")
    chip_gain = h100.usd_per_million / v5e.usd_per_million
    bigger = scenarios.evaluate("chatbot", "H100", batch=32)
    assert bigger.meets_latency
    assert h100.usd_per_million / bigger.usd_per_million > chip_gain


def test_no_energy_for_tpus_without_published_power():
    """joules: none for TPUs v5e and later, which have no published power."""
    for chip in ("TPU v5e", "TPU v5p", "TPU v6e", "TPU7x"):
        assert ak.chips.get(chip).watts is None
        assert scenarios.evaluate("offline", chip).joules is None
    assert scenarios.evaluate("offline", "H100").joules is not None


def test_pretraining_reproduces_the_scaling_books_44_days():
    """The scaling book's LLaMA-3-70B example (applied-training.md: 8,960 TPU v5p at 40% MFU): about 44 days."""
    book = scenarios.evaluate("pretrain", "TPU v5p", n_chips=8960, mfu=0.40)
    assert book.days == pytest.approx(44, rel=0.05)
