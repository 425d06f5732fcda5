"""accelkit.topology: a group on whole axes of its job's slice, as JAX lays a mesh axis out, and
the slice a job was bought as (issue 21: the TPU MLPerf rows)."""

import pytest

from accelkit import chips, collectives, layout, parallel, topology

V5P = chips.get("TPU v5p")


def test_whole_axes_follow_mesh_utils_preference_for_more_axes():
    # 64 on an 8x8x8 is a plane of two whole axes, 8 is one axis, 512 all three
    assert topology.whole_axes((8, 8, 8), 64) == (8, 8)
    assert topology.whole_axes((8, 8, 8), 8) == (8,)
    assert topology.whole_axes((8, 8, 8), 512) == (8, 8, 8)
    # 16 on a 4x4x8 takes the 4x4 plane (two axes) before the 8 would be split
    assert topology.whole_axes((8, 4, 4), 16) == (4, 4)
    # the MLPerf 6,144-chip slice: each of tp 8, fsdp 48, dp 16 is one ring
    assert [topology.whole_axes((8, 16, 48), n) for n in (8, 48, 16)] == [(8,), (48,), (16,)]


def test_whole_axes_none_where_no_axes_multiply_to_the_group():
    assert topology.whole_axes((24, 16, 16), 48) is None
    assert topology.whole_axes((4, 4, 4), 8) is None
    assert topology.whole_axes((8, 8, 8), 1) is None


def test_on_slice_sets_the_jobs_slice_and_checks_it_against_the_pod():
    job = topology.on_slice(V5P, (8, 16, 48))
    assert job.max_slice_shape == (8, 16, 48) and job.max_slice_chips == 6144
    assert job.name == V5P.name
    # the slice search now returns the published shape, not the compact 24x16x16
    assert sorted(topology.slice_layout(job, 6144)[1]) == [8, 16, 48]
    assert sorted(topology.slice_layout(V5P, 6144)[1]) == [16, 16, 24]
    with pytest.raises(ValueError, match="multiple of 4"):
        topology.on_slice(V5P, (6, 16, 64))
    with pytest.raises(ValueError, match="pod"):
        topology.on_slice(V5P, (32, 32, 32))
    with pytest.raises(ValueError, match="3 positive ints"):
        topology.on_slice(V5P, (8, 16))
    with pytest.raises(ValueError, match="TPUs"):
        topology.on_slice(chips.get("H100"), (8, 16, 48))


def test_placed_groups_take_whole_axes_of_the_jobs_slice():
    assert layout.placed(V5P, 64, 512) == (8, 8)       # 8x8x8 job: FSDP on a plane
    assert layout.placed(V5P, 8, 512) == (8,)
    assert layout.placed(V5P, 48, 6144) == 48          # 24x16x16: no whole axes, compact
    job = topology.on_slice(V5P, (8, 16, 48))
    assert layout.placed(job, 48, 6144) == (48,)       # the published slice: one ring
    assert layout.placed(chips.get("H100"), 8, 64) == 8


def test_the_plane_jax_uses_gathers_slower_than_the_cube_the_model_used_to_pick():
    # the 8x8 plane has 4 wrapped links per chip, a 4x4x4 cube 6: placing FSDP as JAX does
    # makes the 64-way gather slower than the compact cube the model used to pick
    plane = collectives.collective("all_gather", V5P, array_bytes=2**33, over=(8, 8))
    cube = collectives.collective("all_gather", V5P, array_bytes=2**33, over=(4, 4, 4))
    assert plane.seconds > cube.seconds


def test_a_train_step_on_the_published_slice_prices_fsdp_on_one_ring():
    lay = parallel.Layout(dp=16, fsdp=48, tp=8, microbatch_tokens=8 * 2048,
                          recompute="selective")
    bought = parallel.train_step("gpt-3-175b", topology.on_slice(V5P, (8, 16, 48)), lay,
                                 6144 * 2048, dtype="int8", framework="maxtext")
    compact = parallel.train_step("gpt-3-175b", V5P, lay, 6144 * 2048, dtype="int8",
                                  framework="maxtext")
    each = {s: {c.name: c.seconds_each for c in st.collectives}
            for s, st in (("bought", bought), ("compact", compact))}
    # a 48-ring has 2 links per chip, the 4x4x3 the compact slice gave it 5
    assert each["bought"]["fsdp_gather"] > 1.3 * each["compact"]["fsdp_gather"]
    assert each["bought"]["tp"] == pytest.approx(each["compact"]["tp"])
