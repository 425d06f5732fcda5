"""Expert parallelism's network side: how the all-to-all scales, and node-limited routing.

    >>> import accelkit as ak
    >>> rows = ak.experts.all_to_all_scaling("v5p", array_bytes=1e9, counts=(4, 8, 16))
    >>> [round(r.seconds * 1e3, 2) for r in rows]      # one wrapped torus axis: flat
    [1.39, 1.39, 1.4]
    >>> rows = ak.experts.all_to_all_scaling("GB200", array_bytes=1e9, counts=(8, 16, 72))
    >>> [round(r.seconds * 1e3, 3) for r in rows]      # one NVLink switch: falls as 1/n
    [0.126, 0.069, 0.019]

**Why the torus and the switch differ** (the scaling book, sharding.md: "AllToAll is 1/4 of an
AllGather on a bidirectional ring"). A fixed array of V bytes is exchanged by n chips, each
holding V/n and sending V/n² to every other. On a switch every chip sends through its own port,
so the time is (n-1)·V / (n²·W): it falls about as 1/n. On one wrapped ring of n chips the
pairs' paths share links: the busiest link carries n²/8 chunks of V/n², so the time is V/(8w)
whatever n is: adding chips to the axis does not shorten it. :mod:`accelkit.collectives` prices
both (its docstring derives the formulas); :func:`all_to_all_scaling` tabulates them.

**Node-limited routing** (DeepSeek-V3, arXiv:2412.19437 §2.1.2: "each token will be sent to at
most M nodes", M = 4 in its §4.2). On GPUs the expensive copies cross nodes on InfiniBand (50
GB/s per GPU against 450-900 GB/s of NVLink). DeepSeek-V3 sends each token once per target node
over InfiniBand and forwards it over NVLink to the experts there (§3.2.2). :func:`dispatch`
counts the expected InfiniBand copies per token with experts spread evenly and routing
uniform over them (an assumption: real routers are skewed), for three schemes:

* ``"per_expert"``: every one of the token's k copies goes straight to its expert's GPU (the
  plain all-to-all :mod:`accelkit.step_cost` prices): k·(G-1)/G remote copies over G nodes.
* ``"per_node"``: one copy per distinct remote node: (G-1)·(1-(1-1/G)^k).
* ``max_nodes=M`` (with ``"per_node"``): the router picks at most M nodes: M·(G-1)/G.

**The critical batch, against the scaling book's rule** (gpus.md, "Data Parallelism", MoE
models: the per-GPU token batch must exceed (E/k)·C/W, with C the bf16 peak and W the node's
egress bandwidth, "32 * 2475 = 79,200" for gpt-oss on H100s across nodes). The rule counts the
MLP block only, so stored over computed is exactly E/k. :func:`critical_batch_against_book` sets
it beside :func:`accelkit.parallel.dp_critical_tokens_per_chip`, which reduces every parameter
(attention and embeddings too, which every token computes) behind the whole backward pass
(attention's scores too), and splits the gap into those two factors.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelkit import _validate, chips, collectives, models, parallel

__all__ = ["AllToAllPoint", "BookCriticalBatch", "Dispatch", "SCHEMES", "all_to_all_scaling",
           "critical_batch_against_book", "dispatch"]

#: How a token's copies reach the nodes holding its experts (module docstring).
SCHEMES = ("per_expert", "per_node")
_ACT_BYTES = 2  # bf16 activations


@dataclass(frozen=True)
class AllToAllPoint:
    """One all-to-all of ``array_bytes`` (the whole array) over ``chips`` chips."""

    chip: str
    chips: int
    array_bytes: float
    seconds: float
    bytes_sent_per_chip: float
    network: str  # as accelkit.collectives names it: "ICI", "NVLink", "NVLink+scale-out", ...
    fabric: str   # in words: "torus axis (wrapped)", "NVLink switch", "NVLink + scale-out"


def _fabric(chip: chips.Chip, result: collectives.Collective) -> str:
    if chip.kind == "tpu":
        level = result.levels[0]
        if len(level.axes) == 1:
            return "torus axis (" + ("wrapped" if level.wraps[0] else "no wraparound") + ")"
        return f"torus {'x'.join(map(str, level.axes))}"
    return "NVLink switch" if result.network == "NVLink" else "NVLink + scale-out switches"


def all_to_all_scaling(chip: str | chips.Chip, *, array_bytes: float,
                       counts: tuple[int, ...] | list[int]) -> tuple[AllToAllPoint, ...]:
    """The same all-to-all (``array_bytes``, the whole array) over each chip count in ``counts``.

    On a TPU each count must fit ONE torus axis of the largest slice (the case the module
    docstring explains; a larger group is a multi-axis sub-torus, which
    :func:`accelkit.collectives.all_to_all` prices too); on a GPU any count
    :mod:`accelkit.collectives` accepts (beyond the NVLink domain, whole domains).

    Raises:
        TypeError: ``counts`` not a tuple or list.
        ValueError: an empty or over-long ``counts``, a count below 2, a TPU count longer than
            its longest slice axis, or as :func:`accelkit.collectives.all_to_all`.
    """
    the_chip = chips.get(chip)
    if isinstance(counts, (str, bytes)) or not isinstance(counts, (tuple, list)):
        raise TypeError(f"counts must be a tuple or list of chip counts, got "
                        f"{type(counts).__name__} {counts!r}")
    if not 1 <= len(counts) <= 64:
        raise ValueError(f"counts must hold 1 to 64 chip counts, got {len(counts)}")
    ns = [_validate.positive_int(f"counts[{i}]", n, maximum=collectives.MAX_GROUP_CHIPS)
          for i, n in enumerate(counts)]
    longest = max(the_chip.max_slice_shape) if the_chip.kind == "tpu" else None
    out = []
    for i, n in enumerate(ns):
        if n < 2:
            raise ValueError(f"counts[{i}] must be at least 2 chips (one chip exchanges "
                             f"nothing), got {n}")
        if longest is not None and n > longest:
            raise ValueError(f"counts[{i}] = {n} does not fit one torus axis of "
                             f"{the_chip.name} (its longest slice axis is {longest} chips)")
        r = collectives.all_to_all(the_chip, array_bytes=array_bytes, over=n)
        out.append(AllToAllPoint(chip=the_chip.name, chips=n, array_bytes=r.array_bytes,
                                 seconds=r.seconds, bytes_sent_per_chip=r.bytes_sent_per_chip,
                                 network=r.network, fabric=_fabric(the_chip, r)))
    return tuple(out)


@dataclass(frozen=True)
class Dispatch:
    """One MoE layer's token dispatch on GPUs (the combine returns the same bytes).

    ``remote_copies_per_token``: expected copies of a token's hidden vector that cross
    InfiniBand; ``scaleout_seconds``/``scaleup_seconds``: each network's bandwidth time for the
    chip's tokens; ``seconds``: the larger (the NVLink forwarding overlaps the InfiniBand
    transfer, as DeepSeek-V3's dispatch kernels do, §3.2.2).
    """

    model: str
    chip: str
    ep: int
    nodes: int
    tokens_per_chip: int
    scheme: str
    max_nodes: int | None
    remote_copies_per_token: float
    scaleout_bytes_per_chip: float
    scaleup_bytes_per_chip: float
    scaleout_seconds: float
    scaleup_seconds: float
    seconds: float


def _moe_on_gpu(model: str | models.Model, chip: str | chips.Chip, why_gpu: str
                ) -> tuple[models.MoETransformer, chips.Chip]:
    """The catalog's mixture of experts and GPU, or a ValueError naming which is wrong (a TPU's
    message says ``why_gpu``)."""
    the_model = models.get(model)
    if not isinstance(the_model, models.MoETransformer):
        raise ValueError(f"model must be a mixture of experts; {the_model.name} is dense")
    the_chip = chips.get(chip)
    if the_chip.kind != "gpu":
        raise ValueError(f"{why_gpu}; {the_chip.name} is a TPU")
    return the_model, the_chip


def dispatch(model: str | models.Model, chip: str | chips.Chip, *, tokens_per_chip: int,
             ep: int, scheme: str = "per_expert", max_nodes: int | None = None) -> Dispatch:
    """Bandwidth time of one MoE layer's dispatch over ``ep`` GPUs (module docstring).

    The experts are spread evenly over the ``ep`` GPUs, which fill whole NVLink domains
    (``chip.scaleup_domain``) or sit in one; each of a GPU's ``tokens_per_chip`` tokens goes to
    the model's ``experts_per_token`` experts, routed uniformly. NVLink carries every copy to
    its expert's GPU (forwarded inside the target node); InfiniBand carries the remote copies.

        >>> free = dispatch("deepseek-v3", "H100", tokens_per_chip=4096, ep=256, scheme="per_node")
        >>> capped = dispatch("deepseek-v3", "H100", tokens_per_chip=4096, ep=256,
        ...                   scheme="per_node", max_nodes=4)
        >>> round(free.remote_copies_per_token, 2), round(capped.remote_copies_per_token, 2)
        (6.95, 3.88)

    Raises:
        ValueError: not a mixture of experts, a TPU (node-limited routing bounds traffic
            between GPU nodes; a TPU slice's all-to-all is ICI: :func:`all_to_all_scaling`),
            ``ep`` not dividing the experts or not whole NVLink domains, ``max_nodes`` without
            ``"per_node"`` or outside 1..nodes, bad numbers.
    """
    the_model, the_chip = _moe_on_gpu(
        model, chip, "dispatch models GPU nodes joined by InfiniBand, and a TPU slice runs the "
                     "all-to-all on ICI (see all_to_all_scaling)")
    tokens = _validate.positive_int("tokens_per_chip", tokens_per_chip, maximum=10**9)
    ep = _validate.positive_int("ep", ep, maximum=collectives.MAX_GROUP_CHIPS)
    scheme = _validate.choice("scheme", scheme, SCHEMES)
    if the_model.n_experts % ep:
        raise ValueError(f"ep must divide {the_model.name}'s {the_model.n_experts} experts, "
                         f"got ep={ep}")
    domain = int(the_chip.scaleup_domain or 1)
    if ep > domain and ep % domain:
        raise ValueError(f"ep={ep} must fit one {domain}-GPU NVLink domain of {the_chip.name} "
                         f"or be whole domains (a multiple of {domain})")
    nodes = max(1, ep // domain)
    if max_nodes is not None:
        if scheme != "per_node":
            raise ValueError("max_nodes (node-limited routing) needs scheme='per_node': the "
                             "limit counts nodes a token is sent to once each")
        max_nodes = _validate.positive_int("max_nodes", max_nodes, maximum=nodes)
    k = the_model.experts_per_token
    remote_share = (nodes - 1) / nodes
    if scheme == "per_expert":
        remote = k * remote_share
    else:
        remote = (nodes - 1) * (1.0 - (1.0 - 1.0 / nodes) ** k)  # distinct remote nodes hit
        if max_nodes is not None:  # M nodes picked uniformly, the token's own among them M/G
            remote = min(remote, max_nodes * remote_share)
    vector = the_model.d_model * _ACT_BYTES
    out_bytes = tokens * remote * vector
    # every copy but the ones for the GPU's own experts moves over NVLink once
    up_bytes = tokens * k * (1.0 - 1.0 / min(ep, domain)) * vector
    nic = the_chip.scaleout_bytes_per_second
    nvl = the_chip.scaleup_bytes_per_second
    if nvl is None or (nodes > 1 and nic is None):  # pragma: no cover - every GPU has both
        raise chips.MissingFigureError(the_chip.name, "scaleout_bytes_per_second",
                                       f"{the_chip.name} lacks a network bandwidth")
    out_s = out_bytes / nic if nodes > 1 and nic else 0.0
    up_s = up_bytes / nvl
    return Dispatch(model=the_model.name, chip=the_chip.name, ep=ep, nodes=nodes,
                    tokens_per_chip=tokens, scheme=scheme, max_nodes=max_nodes,
                    remote_copies_per_token=remote, scaleout_bytes_per_chip=out_bytes,
                    scaleup_bytes_per_chip=up_bytes, scaleout_seconds=out_s,
                    scaleup_seconds=up_s, seconds=max(out_s, up_s))


@dataclass(frozen=True)
class BookCriticalBatch:
    """A mixture of experts' data-parallel critical batch per GPU, the book's rule and ours.

    ``book_tokens_per_chip`` = ``experts_ratio`` × ``book_flops_per_byte``: E/k times the bf16
    peak over the node's egress (its GPUs × each one's scale-out bandwidth). The library's
    ``tokens_per_chip`` is about ``params_ratio`` × ``flops_per_byte``: every parameter over the
    parameters one token's training FLOPs stand for (FLOPs ÷ 6, attention's scores included),
    times the peak over the all-reduce's achieved bytes per second per GPU (ring factor and
    latency included), which :func:`critical_batch_against_book` backs out of the two.
    """

    model: str
    chip: str
    n_chips: int
    experts_ratio: float          # E / k
    params_ratio: float           # params / (training FLOPs per token / 6)
    book_flops_per_byte: float    # bf16 peak / (GPUs per node × scale-out bytes/s per GPU)
    flops_per_byte: float         # tokens_per_chip / params_ratio
    book_tokens_per_chip: float
    tokens_per_chip: float


def critical_batch_against_book(model: str | models.Model, chip: str | chips.Chip,
                                n_chips: int) -> BookCriticalBatch:
    """The scaling book's MoE critical batch (module docstring) beside the library's.

        >>> c = critical_batch_against_book("gpt-oss-120b", "H100", 1024)
        >>> c.experts_ratio, round(c.book_tokens_per_chip, -2)
        (32.0, 79100.0)

    Raises:
        ValueError: not a mixture of experts, or not a GPU (the rule's W is a node's NICs).
    """
    the_model, the_chip = _moe_on_gpu(
        model, chip, "the book's rule divides by a GPU node's egress, and a TPU's rule uses ICI "
                     "(parallel.dp_critical_tokens_per_chip)")
    ours = parallel.dp_critical_tokens_per_chip(the_model, the_chip, n_chips)
    nic = the_chip.scaleout_bytes_per_second
    if nic is None:  # pragma: no cover - every catalog GPU has one
        raise chips.MissingFigureError(the_chip.name, "scaleout_bytes_per_second",
                                       f"{the_chip.name} lacks a scale-out bandwidth")
    peak = the_chip.peak_flops("bf16")
    book_w = int(the_chip.scaleup_domain or 1) * nic
    experts = the_model.n_experts / the_model.experts_per_token
    computed = the_model.flops_per_token("train") / 6.0
    ratio = the_model.params / computed
    return BookCriticalBatch(model=the_model.name, chip=the_chip.name, n_chips=n_chips,
                             experts_ratio=experts, params_ratio=ratio,
                             book_flops_per_byte=peak / book_w, flops_per_byte=ours / ratio,
                             book_tokens_per_chip=experts * peak / book_w, tokens_per_chip=ours)
