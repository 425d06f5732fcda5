"""What each lesson widget's picture shows, in words: the alt text of every figure we publish.

The lessons' pictures are drawn by widgets (``accelkit.widgets``), live in JupyterLab. The book
and the slides show the picture each widget drew when its lesson was run (publish/widget_state.py
reads it from the notebook's saved widget state), and a picture without words is lost on a reader
who cannot see it. So every widget that draws gets a sentence here saying what kind of chart it
is, what its axes and marks are, and what to look for; the numbers the picture shows are in the
widget's own summary beside it, which the page keeps as text.

tests/test_book.py fails when a lesson shows a drawing widget that has no entry here, and when a
published ``<img>`` has no alt text.
"""

from __future__ import annotations

ALT_TEXT: dict[str, str] = {
    "first_widget": "Line chart: the systolic array's utilization, in percent, against the size of a "
                    "square matrix product (M = N = K, log scale), for every size, with the chosen size "
                    "marked; utilization climbs towards 100% as the product grows past the array's size.",
    "where_flops_go": "Two stacked bars for one model pass: the share of its FLOPs and the share of its "
                      "bytes moved, split by kind of operation (matrix products, elementwise, attention, "
                      "and others), each part labelled with its percentage.",
    "all_models_share": "Horizontal bars, two per catalog model (GPT-3, Llama, PaLM, Mixtral, DeepSeek-V3, "
                        "ResNet-50, an LSTM): matrix products' share of the forward pass's FLOPs and of its "
                        "bytes at batch 1; the FLOPs share is near 100% for most, the bytes share lower.",
    "warp_lab": "Line chart on log axes: total, memory and issue cycles of one kernel against the "
                "number of resident warps per core; total and memory cycles fall as more warps keep "
                "memory requests in flight, while issue cycles stay flat far below them.",
    "divergence_lab": "Line chart, one line per branch length: the slowdown of a branchy kernel against "
                      "the share of lanes taking the branch; it jumps as soon as a few lanes diverge, "
                      "because a whole warp then runs both sides, and falls back only when every lane "
                      "takes it.",
    "tensor_core_lab": "Two line charts on log axes against the matrix size, for four kernels (naive, "
                       "tiled SIMD, and two tensor-core tile shapes): cycles on the left, global-memory "
                       "reads on the right; the tiled and tensor-core kernels read far fewer elements "
                       "than the naive one.",
    "systolic_animation": "A grid of the array's cells, rows by columns, at one cycle: values of A "
                          "entering from the left and of B from the top, each cell labelled with the "
                          "values it holds, and beside it the output matrix C with the entries done so "
                          "far shaded.",
    "reuse_comparison": "Grouped bars on a log scale: how many times each value of A and of B is read, "
                        "from DRAM and from on-chip SRAM, on a systolic array and on three GPU-style "
                        "kernels; the naive kernel re-reads each value from DRAM about a hundred times, "
                        "the others far fewer.",
    "fold_explorer": "Left: the matrix product's N by K weight area cut into tiles the size of the array "
                     "(the folds), with the padding shaded. Right: a stacked bar of where the array's "
                     "cell-cycles go: useful multiply-accumulates, padding, and loading, filling and "
                     "draining.",
    "utilization_map": "Left: a heatmap of the array's utilization over the product's M and N (K fixed), "
                       "with the chosen shape marked. Right: utilization against N at the chosen M, one "
                       "value per N, showing the drop just past each multiple of the array's side.",
    "tile_comparison": "Line chart: the useful share of a matrix unit against the number of tokens in "
                       "the batch (log scale), for small tensor-core tiles and for a 128 by 128 array "
                       "with and without fill and drain; small batches leave the big array mostly idle.",
    "roofline_explorer": "Roofline chart on log axes: attainable FLOP/s against arithmetic intensity "
                         "(FLOPs per byte) for the chosen chips, each a sloped memory line meeting a flat "
                         "compute line at its ridge point (a circle), with the chosen operation as a star.",
    "batch_intensity": "Line chart: a decode-step matmul's arithmetic intensity against the batch B, "
                       "rising roughly as B, with the chip's ridge point as a horizontal line; left of the "
                       "crossing the matmul is memory-bound.",
    "ridge_points": "Scatter chart: every catalog chip's ridge point (peak FLOP/s divided by memory "
                    "bandwidth) against its year, TPUs in one colour and GPUs in another, each labelled "
                    "with its name; the two families overlap.",
    "energy_costs": "Horizontal bars on a log scale: picojoules for one multiply-accumulate at int8, "
                    "bf16 and fp32, and for one 64-bit read from SRAMs of three sizes and from DRAM; the "
                    "DRAM read's bar is orders of magnitude longer than any MAC's.",
    "reuse_energy": "Stacked horizontal bars, one per way of running the same matrix product (a systolic "
                    "array and three SIMD kernels): the share of the energy per useful MAC spent on "
                    "arithmetic, SRAM and DRAM, with the total in picojoules at the right; DRAM takes most "
                    "of every bar, and the naive kernel's total is tens of times the others'.",
    "perf_per_watt": "Horizontal bars: dense bf16 FLOP/s per watt of published power (TDP) for each "
                     "chip that publishes both, TPUs in blue and GPUs in green, best at the top: a filled "
                     "bar at the matmul rate kernels measurably reach (hatched where that rate is "
                     "assumed) inside an outline at the datasheet peak; chips without a published "
                     "power figure are left out of the chart and named in the text.",
    "flops_per_dollar_explorer": "Horizontal bars on a log scale: bf16 FLOPs one dollar buys on each chip "
                                 "at the chosen price and utilization, with a tick at every sourced list "
                                 "price so each chip's price spread shows.",
    "training_planner": "A single bar of the training run's duration in days, compute only, for the "
                        "chosen model, token count, chip and chip count; its label gives the days.",
    "communication_explorer": "Line chart on a log x axis: the gradient all-reduce's time divided by the "
                              "backward pass's, against the number of chips at a fixed global batch, for "
                              "a TPU v5p pod and for H100s; above 1 the step is communication-bound.",
    "layout_explorer": "Two stacked bars for one training step of the chosen layout: the step's time "
                       "split into compute, exposed communication and pipeline bubble, and the memory per "
                       "chip split into weights, gradients and optimizer state, and activations, against "
                       "the chip's HBM.",
    "published_runs": "Two bars for the chosen published training run: our compute-only estimate of its "
                      "chip-hours beside the figure its authors reported, with their ratio in the title.",
    "prefill_decode_explorer": "Roofline chart on log axes for the chosen model and chip: achieved FLOP/s "
                               "against arithmetic intensity, with the prefill pass and one decode step "
                               "placed on it; prefill sits near the compute roof, decode far down the "
                               "memory slope.",
    "serving_load_explorer": "Line chart: one replica's latency in seconds against the arrival rate in "
                             "requests per second: time to first token and time per output token, each "
                             "at its 50th and 99th percentile, with a dotted vertical line at the "
                             "scheduler's saturation rate and the chosen load marked; latency stays flat "
                             "until near saturation, then the time to first token climbs steeply.",
    "kv_cache_explorer": "One horizontal stacked bar in gigabytes: the model's weights plus its KV cache "
                         "at the chosen context length and batch, against a vertical line at the HBM of "
                         "the chosen chips; the title says whether it fits.",
    "batch_latency_explorer": "Line chart on twin axes against the decode batch: latency per token "
                              "(rising) and throughput in tokens per second (rising, then flattening), "
                              "with the latency target as a horizontal line; dotted where the batch does "
                              "not fit in memory.",
    "serving_cost_explorer": "Line chart: dollars per million generated tokens against the batch, one "
                             "line per chip, TPUs solid and GPUs dashed; cost falls steeply as the batch "
                             "grows, then levels off.",
    "flexibility_lab": "Horizontal bars, one per operation of the chosen workload: the toy TPU's "
                       "cell-cycles divided by the toy GPU's on a log scale, left of 1 where the TPU wins "
                       "per cell and right where the GPU does.",
    "mix_builder": "Left: horizontal bars of the TPU-to-GPU cell-cycle ratio for five operations (a "
                   "dense matmul, a recurrent step, an embedding gather, a branchy custom op, a sparse "
                   "matmul). Right: the recurrent step's ratio against its batch.",
    "gather_vs_matmul_roofline": "Two rooflines on log axes, one per chosen chip: attainable FLOP/s "
                                 "against arithmetic intensity, with an embedding-bag gather (square) far "
                                 "down the memory slope and a dense layer (circle) near the compute roof.",
    "decision_explorer": "Bar chart: the chosen scenario's cost in dollars on each compared chip, TPUs in "
                         "blue and GPUs in green, a bar faded where its chip misses the scenario's target "
                         "or does not fit; the table beside it gives each chip's plan.",
    "all_to_all_explorer": "Line chart on log axes: the time of one all-to-all of a fixed array against the "
                           "number of chips it is spread over, one line per fabric (one wrapped TPU torus "
                           "axis, a cube of torus axes, NVLink and InfiniBand on GPUs); the torus axis's "
                           "line stays flat as chips are added while the switched fabrics' lines fall, "
                           "with a step up where a GPU group leaves its NVLink domain.",
    "scaleup_domain_explorer": "Horizontal bars on a log axis, one per catalog chip: the chips one scale-up "
                               "domain holds (a GPU's NVLink domain, a TPU's largest ICI slice), with a "
                               "black mark at the chips the chosen model's training state needs; a mark "
                               "inside its bar means the state fits in one domain.",
    "goodput_explorer": "Line chart on a log x axis: for a job at Llama 3's interruption rate, the share "
                        "of its time that trains (goodput, solid) and that times the share of chips not "
                        "held as spares (dashed), against the number of chips in the job; both fall as "
                        "the job grows, faster with slower checkpoint saves and restarts.",
}
