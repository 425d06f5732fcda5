"""One serving replica, iteration by iteration: the scheduler, the paged KV cache, the clock.

:func:`run` plays a replica's requests through a scheduler (:mod:`accelkit.serving`'s module
docstring says what each option means and where it comes from) and returns when each request
got its first token and its last. Every iteration's time is
:meth:`accelkit.serving_step.IterationGroup.seconds` of the tokens it holds (the library's
prefill and decode rule); runs of pure-decode iterations between events (an arrival that can be
admitted, a completion, the cache running short) are summed in closed form
(:meth:`~accelkit.serving_step.IterationGroup.decode_run_seconds`), so a quiet replica costs
the simulator a few operations per request, not per token.

Bookkeeping, for the next reader: ``tau`` counts the replica's iterations; every running
sequence decodes one token per iteration, so a sequence that joined at iteration ``tau_j`` with
``c`` tokens cached holds ``c + (tau - tau_j)`` at iteration ``tau``: it is stored as
``a = c - tau_j``, and the totals an iteration needs (tokens, pairs, reads) are kept as sums
updated when a sequence joins or leaves. Its KV blocks at iteration ``tau`` are
``const + w·ceil((o + tau) / block)``; the sum over sequences is kept by the residue of ``o``
modulo the block, so the cache's occupancy is known in ``block`` operations whatever the
batch. Speculative decoding advances each sequence by its own accepted tokens, so it keeps
every sequence's context and steps one iteration at a time (:class:`_Speculative`): about
2.5 s of CPU for 10,000 requests where the other paths take 0.2-0.5 s
(benchmarks/bench_serving.py).
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from accelkit.serving_step import IterationGroup


@dataclass(frozen=True)
class Engine:
    """How one replica schedules (checked options; :func:`accelkit.serving.simulate` builds it)."""

    scheduler: str                 # "continuous" or "static"
    token_budget: int | None       # tokens per iteration (None: no limit)
    chunked_prefill: bool
    max_batch: int | None          # sequences per replica (beams count one each)
    block_tokens: int
    kv_blocks: int                 # blocks the replica's cache holds
    kv_policy: str                 # "preempt" or "reserve"
    beam_width: int
    prefix_hit_rate: float
    speculative: tuple[IterationGroup, int, float] | None  # draft group, tokens drafted, acceptance
    stage: str                     # "both", "prefill" (a prefill pool) or "decode" (a decode pool)


@dataclass
class Trace:
    """What a replica's run gives back: per request (by position in the replica's list) and
    the run's totals."""

    first_token: np.ndarray        # seconds, absolute
    done: np.ndarray               # seconds, absolute
    preemptions: np.ndarray        # times each request was preempted (and recomputed)
    queued_seconds: float          # Σ over requests of time spent waiting for admission
    held_seconds: float            # Σ over iterations of requests held × the iteration's time
    busy_seconds: float            # time the replica spent in iterations
    iterations: int
    peak_sequences: int            # most sequences held at once (beams count one each)


def _ceil(x: int, b: int) -> int:
    return -(-x // b)


class _Replica:
    """The continuous (and static) scheduler over the tau-indexed bookkeeping above."""

    def __init__(self, group: IterationGroup, engine: Engine, arrivals: np.ndarray,
                 prompts: np.ndarray, outputs: np.ndarray, has_kv: bool, rng: np.random.Generator):
        self.g, self.e = group, engine
        self.arrivals = arrivals.tolist()
        self.prompts = prompts.tolist()
        self.outputs = outputs.tolist()
        self.n = len(self.arrivals)
        self.has_kv = has_kv                  # requests arrive with their prompt's KV (decode pool)
        self.rng = rng
        self.first = [math.nan] * self.n
        self.done = [math.nan] * self.n
        self.preempted = [0] * self.n
        self.t = 0.0
        self.tau = 0
        self.next_arrival = 0
        self.waiting: deque[list] = deque()   # [rid, prompt, remaining, has_kv, since]
        self.prefilling: list[list] = []      # [rid, done, prompt, remaining, blocks, width]
        self.running: dict[int, tuple] = {}   # key -> (rid, w, a, finish, const, q, r)
        self.heap: list[tuple[int, int]] = []
        self.key = 0
        self.tokens = 0                        # Σ w over running
        self.sum_a1 = 0                        # Σ w·(a + 1) over running
        self.const = 0                         # Σ const + w·q over running
        self.residue = [0] * engine.block_tokens   # Σ w by residue of o
        self.residue_sum = 0
        self.prefill_blocks = 0
        self.version = 0                       # bumped whenever the blocks held change
        self.free_key = (-1, -1)               # (tau, version) of the free count kept
        self.free_count = 0
        self.held_requests = 0                 # requests admitted and not finished
        self.queued = 0.0
        self.held = 0.0
        self.busy = 0.0
        self.iterations = 0
        self.peak = 0
        # a fleet dispatching by load (:func:`fleet`) runs the replicas side by side: each
        # stops at the first iteration boundary at or past ``horizon`` (the next dispatch) and
        # records its completion times in order, so its requests in flight at any earlier
        # time can be counted
        self.horizon = math.inf
        self.finished: list[float] = []

    def add(self, arrival: float, prompt: int, output: int) -> None:
        """One more request, arriving at ``arrival`` (no earlier than any before it)."""
        self.arrivals.append(arrival)
        self.prompts.append(prompt)
        self.outputs.append(output)
        self.first.append(math.nan)
        self.done.append(math.nan)
        self.preempted.append(0)
        self.n += 1

    # -- the cache -------------------------------------------------------------------------

    def blocks_held(self, tau: int) -> int:
        """Blocks the running sequences need for the iteration at ``tau``:
        ``const + Σ_r W[r]·ceil((r + tau) / b)``, which for ``tau = q·b + s`` is
        ``Σ W·(q + 1)``, less ``W[0]`` when ``s = 0``, plus the residues ``r > b - s``."""
        b = self.e.block_tokens
        q, s = divmod(tau, b)
        w = self.residue
        total = self.const + self.residue_sum * (q + 1)
        if s == 0:
            return total - w[0]
        return total + sum(w[b + 1 - s:])

    def free_blocks(self) -> int:
        """Blocks free for the iteration at ``tau`` (kept until the blocks held change: the
        loop asks at every event, before admitting and before a decode run)."""
        key = (self.tau, self.version)
        if key != self.free_key:
            self.free_key, self.free_count = key, self.count_free()
        return self.free_count

    def count_free(self) -> int:
        # blocks_held(self.tau), inlined
        b = self.e.block_tokens
        q, s = divmod(self.tau, b)
        held = self.const + self.residue_sum * (q + 1)
        if s == 0:
            held -= self.residue[0]
        elif s > 1:
            held += sum(self.residue[b + 1 - s:])
        return self.e.kv_blocks - held - self.prefill_blocks

    def reservation(self, prompt: int, remaining: int, width: int, has_kv: bool = False
                    ) -> int:
        """Blocks a sequence is given at admission: its prompt, or (reserve) its whole life."""
        b = self.e.block_tokens
        if self.e.kv_policy == "reserve":
            if width == 1:
                return _ceil(prompt + remaining, b)
            return _ceil(prompt, b) + width * _ceil(remaining, b)
        return _ceil(prompt + (1 if has_kv else 0), b)

    # -- sequences joining and leaving decode ----------------------------------------------

    def join(self, rid: int, context: int, remaining: int, width: int, prompt: int,
             reserved: int) -> None:
        """A sequence with ``context`` tokens cached starts decoding at the next iteration."""
        tau = self.tau
        a = context - tau
        finish = tau + remaining
        b = self.e.block_tokens
        if self.e.kv_policy == "reserve":
            const, q, r, w_growth = reserved, 0, 0, 0
        else:
            o = a + 1 if width == 1 else a + 1 - prompt
            q, r = divmod(o, b)
            const, w_growth = (0 if width == 1 else _ceil(prompt, b)), width
        key = self.key
        self.key += 1
        self.version += 1
        self.running[key] = (rid, width, a, finish, const, q, r, w_growth)
        heapq.heappush(self.heap, (finish, key))
        self.tokens += width
        self.sum_a1 += width * (a + 1)
        self.const += const + w_growth * q
        self.residue[r] += w_growth
        self.residue_sum += w_growth

    def leave(self, key: int) -> tuple:
        entry = self.running.pop(key)
        self.version += 1
        _, width, a, _, const, q, r, w_growth = entry
        self.tokens -= width
        self.sum_a1 -= width * (a + 1)
        self.const -= const + w_growth * q
        self.residue[r] -= w_growth
        self.residue_sum -= w_growth
        return entry

    def complete_decodes(self) -> None:
        """Sequences whose last token came out of the iteration just ended."""
        heap, running, tau = self.heap, self.running, self.tau
        while heap and heap[0][0] <= tau:
            finish, key = heapq.heappop(heap)
            entry = running.get(key)
            if entry is None or entry[3] != finish:
                continue   # preempted: a stale entry
            self.leave(key)
            self.done[entry[0]] = self.t
            self.finished.append(self.t)
            self.held_requests -= 1

    def preempt_if_short(self) -> None:
        """vLLM's recompute preemption: while the next iteration's blocks do not fit, the most
        recently admitted running sequence gives its blocks back and waits, first in line, to
        be prefilled again with every token it has so far."""
        while self.running and self.free_blocks() < 0:
            key = next(reversed(self.running))
            rid, width, a, finish, *_ = self.leave(key)
            self.preempted[rid] += 1
            self.held_requests -= 1
            context = a + self.tau
            self.waiting.appendleft([rid, context + 1, finish - self.tau, False, self.t])

    # -- arrivals and admission -------------------------------------------------------------

    def arrive(self) -> None:
        arrivals, t = self.arrivals, self.t
        while self.next_arrival < self.n and arrivals[self.next_arrival] <= t:
            i = self.next_arrival
            remaining = self.outputs[i] - (1 if self.has_kv else 0)
            self.waiting.append([i, self.prompts[i], remaining, self.has_kv, arrivals[i]])
            self.next_arrival += 1

    def sequences(self) -> int:
        if not self.prefilling:
            return self.tokens
        return self.tokens + sum(p[5] for p in self.prefilling)

    def admit(self, budget_left: float) -> float:
        """Admit waiting requests, first come first served, while the batch, the cache and the
        iteration's token budget allow; returns the budget left."""
        e, width = self.e, self.e.beam_width
        while self.waiting:
            rid, prompt, remaining, has_kv, since = self.waiting[0]
            if e.max_batch is not None and self.sequences() + width > e.max_batch:
                break
            need = self.reservation(prompt, remaining, width, has_kv)
            if need > self.free_blocks():
                break
            if has_kv:      # a decode pool: the prompt's cache arrived with the request
                self.waiting.popleft()
                self.queued += self.t - since
                self.held_requests += 1
                self.join(rid, prompt, remaining, width, prompt, need)
                continue
            hit = 0
            if e.prefix_hit_rate:
                # whole blocks of the original prompt found in the prefix cache (at least one
                # token is computed: the one whose logits give the next token)
                b = e.block_tokens
                hit = min(int(e.prefix_hit_rate * self.prompts[rid]) // b * b, prompt - 1)
            todo = prompt - hit
            if e.token_budget is not None:
                if budget_left <= 0 or (not e.chunked_prefill and todo > budget_left):
                    break
            self.waiting.popleft()
            self.queued += self.t - since
            self.held_requests += 1
            self.prefill_blocks += need
            self.version += 1
            self.prefilling.append([rid, hit, prompt, remaining, need, width])
            if e.token_budget is not None:
                budget_left -= todo if not e.chunked_prefill else min(todo, budget_left)
        return budget_left

    # -- one iteration ---------------------------------------------------------------------

    def decode_totals(self) -> tuple[int, int, int]:
        """Tokens, pairs and reads of the running sequences' decode at this iteration (a decode
        token at context c has c + 1 pairs and reads, under either mask)."""
        pairs = self.sum_a1 + self.tokens * self.tau
        return self.tokens, pairs, pairs

    def iteration(self) -> None:
        """One iteration with prefill work: the decodes, then prompt chunks, then new prompts."""
        g, e = self.g, self.e
        tokens, whole_pairs, whole_reads = self.decode_totals()
        pairs, reads = float(whole_pairs), float(whole_reads)
        logits = tokens
        budget = math.inf if e.token_budget is None else e.token_budget - tokens
        finishing = []
        for entry in self.prefilling:
            rid, done, prompt, remaining, blocks, width = entry
            left = prompt - done
            chunk = left if e.token_budget is None or not e.chunked_prefill else \
                int(min(left, max(budget, 0)))
            if chunk <= 0:
                continue
            budget -= chunk
            tokens += chunk
            pairs += g.pairs(chunk, done)
            reads += done + chunk
            entry[1] = done + chunk
            if entry[1] == prompt:
                logits += 1
                finishing.append(entry)
        seconds = g.seconds(tokens, logits, pairs, reads)
        self.advance(seconds, 1)
        self.complete_decodes()
        if finishing:
            ended = set(map(id, finishing))
            self.prefilling = [p for p in self.prefilling if id(p) not in ended]
            for rid, _, prompt, remaining, blocks, width in finishing:
                self.prefill_blocks -= blocks
                self.version += 1
                self.prefilled(rid, prompt, remaining, width, blocks)

    def chunk_run(self) -> bool:
        """Chunked prefill of one long prompt beside a fixed set of decodes: iterations that
        each take a full chunk (the budget less the decode tokens), until the next event (a
        decode finishing, the cache running short, the prompt's last chunk), summed in closed
        form. No request can join meanwhile (the prompt still pending fills the budget). False,
        having done nothing, when fewer than two such iterations are ahead."""
        e, g = self.e, self.g
        if (len(self.prefilling) != 1 or e.token_budget is None or not e.chunked_prefill
                or self.has_kv):
            return False
        rid, done, prompt, remaining, blocks, width = self.prefilling[0]
        decodes = self.tokens
        chunk = e.token_budget - decodes
        left = prompt - done
        if chunk <= 0 or left <= chunk:
            return False
        steps = (left - 1) // chunk       # each leaves at least one token for later
        if steps < 2:
            return False
        while self.heap and self.heap[0][1] not in self.running:
            heapq.heappop(self.heap)
        if self.heap:
            steps = min(steps, self.heap[0][0] - self.tau)
        if e.kv_policy == "preempt":
            steps = min(steps, e.block_tokens * (self.free_blocks() // max(1, decodes)) + 1)
        if steps < 2:
            return False
        decode_pairs = self.sum_a1 + decodes * self.tau
        seconds = g.run_seconds(decodes + chunk, decodes,
                                decode_pairs + g.pairs(chunk, done),
                                decode_pairs + done + chunk,
                                decodes + g.pairs(chunk, done + chunk) - g.pairs(chunk, done),
                                decodes + chunk, steps)
        self.advance(seconds, steps)
        self.prefilling[0][1] = done + steps * chunk
        self.complete_decodes()
        return True

    def prefilled(self, rid: int, prompt: int, remaining: int, width: int, blocks: int) -> None:
        """A prompt's last chunk ran: its logits give the next token."""
        if math.isnan(self.first[rid]):
            self.first[rid] = self.t
        remaining -= 1
        if remaining <= 0 or self.e.stage == "prefill":
            self.done[rid] = self.t
            self.finished.append(self.t)
            self.held_requests -= 1
            return
        self.join(rid, prompt, remaining, width, prompt, blocks)

    def advance(self, seconds: float, steps: int) -> None:
        self.held += self.held_requests * seconds
        self.busy += seconds
        self.t += seconds
        self.tau += steps
        self.iterations += steps

    # -- runs of pure decode -----------------------------------------------------------------

    def decode_run(self) -> None:
        """Decode iterations until the next event: a completion, an arrival that could be
        admitted, or (paged) the cache running short. Summed in closed form."""
        g, e = self.g, self.e
        limit = self.heap[0][0] - self.tau if self.heap else 1
        while self.heap and self.heap[0][1] not in self.running:
            heapq.heappop(self.heap)
            limit = self.heap[0][0] - self.tau if self.heap else 1
        if e.kv_policy == "preempt":
            free = self.free_blocks()
            # each sequence needs at most one more block per `block` iterations
            limit = min(limit, e.block_tokens * (free // max(1, self.tokens)) + 1)
        tokens, pairs, reads = self.decode_totals()
        steps = max(1, limit)
        admissible = (not self.waiting and e.scheduler == "continuous"
                      and (self.next_arrival < self.n or self.horizon < math.inf))
        if admissible:
            # until the next arrival, or the next dispatch when the fleet dispatches by load
            wait = min(self.arrivals[self.next_arrival] if self.next_arrival < self.n
                       else math.inf, self.horizon) - self.t
            steps, seconds = g.decode_run_steps(tokens, pairs, reads, wait, steps)
        else:
            seconds = g.decode_run_seconds(tokens, pairs, reads, 0, steps)
        self.advance(seconds, steps)
        self.complete_decodes()

    # -- the loop --------------------------------------------------------------------------

    def run(self) -> Trace:
        self.resume()
        return self.trace()

    def resume(self) -> None:
        """Play the loop until every request known is done, or (a fleet dispatching by load)
        until the clock reaches :attr:`horizon`."""
        static = self.e.scheduler == "static"
        preempting = self.e.kv_policy == "preempt"
        arrivals = self.arrivals
        chunking = self.e.chunked_prefill
        while True:
            if self.t >= self.horizon:
                return
            n = self.n
            if self.next_arrival < n and arrivals[self.next_arrival] <= self.t:
                self.arrive()
            held = self.sequences()
            if held > self.peak:
                self.peak = held
            if preempting and self.running and self.free_blocks() < 0:
                self.preempt_if_short()
            if static:
                if not self.running and not self.prefilling and self.waiting:
                    self.admit(math.inf)
            else:
                if self.waiting:
                    budget = (math.inf if self.e.token_budget is None
                              else self.e.token_budget - self.tokens
                              - self._prefill_tokens_pending())
                    self.admit(budget)
            if self.prefilling:
                if not (chunking and self.chunk_run()):
                    self.iteration()
            elif self.running:
                self.decode_run()
            elif self.next_arrival < self.n:
                self.t = max(self.t, self.arrivals[self.next_arrival])  # idle until the next
            elif self.waiting:
                raise RuntimeError("a waiting request can never be admitted")  # refused earlier
            else:
                return   # idle: nothing known is left (a fleet may add more)

    def trace(self) -> Trace:
        return Trace(np.array(self.first), np.array(self.done), np.array(self.preempted),
                     self.queued, self.held, self.busy, self.iterations, self.peak)

    def in_flight(self, at: float) -> int:
        """Requests given to this replica by ``at`` and not finished by then."""
        return self.n - bisect.bisect_right(self.finished, at)

    def _prefill_tokens_pending(self) -> int:
        """Prompt tokens already queued for this iteration by sequences mid-prefill."""
        if not self.e.chunked_prefill:
            return 0
        return sum(p[2] - p[1] for p in self.prefilling)


class _Speculative(_Replica):
    """Speculative decoding (Leviathan et al., 2023): each iteration the draft model proposes
    ``k`` tokens per running sequence (``k`` draft decode steps), and the target checks them
    all in one pass, ``k + 1`` tokens per sequence; each proposed token is accepted with
    probability ``alpha`` until the first rejection, and the target's own token follows, so a
    sequence advances by 1 to ``k + 1`` tokens, ``(1 - alpha^(k+1)) / (1 - alpha)`` on average.
    Sequences advance unevenly, so each keeps its own context and the run steps one iteration
    at a time; the cache is reserved at admission (``kv_policy="reserve"``)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.seqs: dict[int, list[int]] = {}   # key -> [rid, context, remaining, reserved]

    def free_blocks(self) -> int:
        return self.count_free()   # its sequences change the blocks held without a version

    def join(self, rid: int, context: int, remaining: int, width: int, prompt: int,
             reserved: int) -> None:
        key = self.key
        self.key += 1
        self.seqs[key] = [rid, context, remaining, reserved]
        self.tokens += 1
        self.const += reserved

    def decode_run(self) -> None:
        draft, k, alpha = self.e.speculative  # type: ignore[misc]
        g = self.g
        seqs = list(self.seqs.values())
        n = len(seqs)
        contexts = sum(s[1] for s in seqs)
        # the draft proposes k tokens: k decode steps of its own over the same contexts
        first = contexts + n
        seconds = draft.decode_run_seconds(n, first, first, 0, k)
        # the target checks k + 1 tokens per sequence in one pass
        t = k + 1
        seconds += g.seconds(n * t, n * t, t * contexts + n * t * (t + 1) / 2.0,
                             contexts + n * t)
        accepted = (np.full(n, k) if alpha >= 1.0 else
                    np.minimum(self.rng.geometric(1.0 - alpha, size=n) - 1, k))
        self.advance(seconds, 1)
        for key, s, extra in zip(list(self.seqs), seqs, accepted.tolist()):
            s[1] += extra + 1
            s[2] -= extra + 1
            if s[2] <= 0:
                del self.seqs[key]
                self.tokens -= 1
                self.const -= s[3]
                self.done[s[0]] = self.t
                self.held_requests -= 1

    def iteration(self) -> None:
        # prefill iterations carry no speculation: the running sequences decode one token
        g = self.g
        seqs = list(self.seqs.values())
        tokens = len(seqs)
        pairs = reads = float(sum(s[1] for s in seqs) + tokens)
        logits = tokens
        finishing = []
        for entry in self.prefilling:
            rid, done, prompt, remaining, blocks, width = entry
            chunk = prompt - done
            tokens += chunk
            pairs += g.pairs(chunk, done)
            reads += done + chunk
            entry[1] = prompt
            logits += 1
            finishing.append(entry)
        self.advance(g.seconds(tokens, logits, pairs, reads), 1)
        for key, s in list(self.seqs.items()):
            s[1] += 1
            s[2] -= 1
            if s[2] <= 0:
                del self.seqs[key]
                self.tokens -= 1
                self.const -= s[3]
                self.done[s[0]] = self.t
                self.held_requests -= 1
        self.prefilling = []
        for rid, _, prompt, remaining, blocks, width in finishing:
            self.prefill_blocks -= blocks
            self.prefilled(rid, prompt, remaining, width, blocks)

    def run(self) -> Trace:
        while True:
            self.arrive()
            self.peak = max(self.peak, self.sequences())
            if self.waiting:
                self.admit(math.inf)
            if self.prefilling:
                self.iteration()
            elif self.seqs:
                self.decode_run()
            elif self.next_arrival < self.n:
                self.t = max(self.t, self.arrivals[self.next_arrival])
            elif self.waiting:
                raise RuntimeError("a waiting request can never be admitted")
            else:
                break
        return Trace(np.array(self.first), np.array(self.done), np.array(self.preempted),
                     self.queued, self.held, self.busy, self.iterations, self.peak)


def run(group: IterationGroup, engine: Engine, arrivals: np.ndarray, prompts: np.ndarray,
        outputs: np.ndarray, *, has_kv: bool = False, seed: int = 0) -> Trace:
    """Serve requests arriving at ``arrivals`` (seconds, sorted) on one replica.

    ``has_kv``: the requests arrive with their prompt's KV cache (a disaggregated fleet's
    decode pool), so they join decode at once and ``outputs`` counts the token the prefill pool
    already produced. ``seed``: the speculative acceptances' draws.
    """
    rng = np.random.default_rng(seed)
    cls = _Speculative if engine.speculative is not None else _Replica
    return cls(group, engine, arrivals, prompts, outputs, has_kv, rng).run()


def fleet(group: IterationGroup, engine: Engine, replicas: int, arrivals: np.ndarray,
          prompts: np.ndarray, outputs: np.ndarray, *, has_kv: bool = False
          ) -> tuple[np.ndarray, list[Trace]]:
    """Serve requests (sorted by arrival) on ``replicas`` replicas, each request given at its
    arrival to the replica with the fewest requests in flight (given and not finished; the
    lowest index on a tie): NVIDIA's MLPerf harness's default traffic distribution,
    ``loadBalancing`` (:data:`accelkit.serving.simulation.LEAST_LOADED_SOURCE`). The replicas
    run side by side, each to the first iteration boundary at or past the arrival, before the
    count. Returns which replica took each request, and each replica's trace over the requests
    it took, in their order."""
    if engine.speculative is not None:
        raise ValueError("dispatch='least_loaded' is modelled without speculative decoding")
    rng = np.random.default_rng(0)
    empty = np.zeros(0)
    pool = [_Replica(group, engine, empty, empty.astype(np.int64), empty.astype(np.int64),
                     has_kv, rng) for _ in range(replicas)]
    which = np.empty(arrivals.size, dtype=np.int64)
    for i, (at, p, o) in enumerate(zip(arrivals.tolist(), prompts.tolist(),
                                       outputs.tolist())):
        best, fewest = 0, -1
        for k, r in enumerate(pool):
            r.horizon = at
            r.resume()
            count = r.in_flight(at)
            if fewest < 0 or count < fewest:
                best, fewest = k, count
        pool[best].add(at, p, o)
        which[i] = best
    for r in pool:
        r.horizon = math.inf
        r.resume()
    return which, [r.trace() for r in pool]


__all__ = ["Engine", "Trace", "fleet", "run"]
