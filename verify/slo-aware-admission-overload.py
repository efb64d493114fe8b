# %% [markdown]
# # Admission under overload: admit everything, or reject at the door?
# One prefill server (Llama-3.1-70B, 4,096-token prompts at TP8 on an H100 node: 0.126 s each, from
# prefill-decode-ratio-from-slos), FIFO, Poisson arrivals. Policy A admits everything. Policy B rejects
# a request on arrival when its predicted TTFT (work queued ahead + its own service) exceeds the target.
# Goodput = requests whose TTFT meets the target, per second. Scenarios are the question's hypotheticals.

# %%
import random

from qbank.verify import check, claim, given

d = given("prefill_service_s", 0.1264, unit="s", source="prefill-decode-ratio-from-slos: a 4,096-token prompt at TP8")
given("tp_gpus", 8, unit="GPUs", source="prefill-decode-ratio-from-slos: one instance = one 8-GPU H100 node at TP8")
given("prompt_tokens", 4096, unit="tokens", source="prefill-decode-ratio-from-slos: the mixed workload's prompt length")
target = given("ttft_target_s", 1.0, unit="s", source="the question's hypothetical TTFT target")
over = given("overload_factor", 1.1, unit="x", source="the question's hypothetical: arrivals at 110% of capacity")
window = given("window_s", 600, unit="s", source="the question's hypothetical: a 10-minute overload")
mu = claim("capacity_rate", 1 / d, unit="requests")
given("arrivals_over_capacity", over, unit="fraction", source="the question's hypothetical, as a share of capacity")
given("overload_excess", over - 1, unit="fraction", source="the question's hypothetical, excess share")


def run(rates: list[tuple[float, float]], admit_all: bool, seed: int = 3) -> dict[str, float]:
    """rates: (duration s, arrival rate) phases. Returns served-in-time, served, rejected, late counts, p90."""
    rng = random.Random(seed)
    t, free_at, good, served, rejected, ttfts = 0.0, 0.0, 0, 0, 0, []
    end, phase_end = 0.0, []
    for dur, _ in rates:
        end += dur
        phase_end.append(end)
    phase = 0
    while True:
        lam = rates[phase][1]
        t += rng.expovariate(lam)
        while phase < len(rates) - 1 and t > phase_end[phase]:
            phase += 1
        if t > end:
            break
        predicted = max(free_at, t) + d - t
        if not admit_all and predicted > target:
            rejected += 1
            continue
        free_at = max(free_at, t) + d
        ttft = free_at - t
        ttfts.append(ttft)
        served += 1
        good += ttft <= target
    ttfts.sort()
    return {"good": good, "served": served, "rejected": rejected,
            "p90": ttfts[int(0.9 * len(ttfts))] if ttfts else 0.0, "late_backlog_s": max(0.0, free_at - end)}


a = run([(window, over * mu)], admit_all=True)
b = run([(window, over * mu)], admit_all=False)
claim("arrival_rate_overload", over * mu, unit="requests")
claim("goodput_admit_all", a["good"] / window, unit="requests")
claim("goodput_reject", b["good"] / window, unit="requests")
claim("good_share_admit_all", a["good"] / a["served"], unit="fraction")
claim("reject_share", b["rejected"] / (b["served"] + b["rejected"]), unit="fraction")
claim("p90_ttft_admit_all_s", a["p90"], unit="s")
claim("p90_ttft_reject_s", b["p90"], unit="s")
claim("backlog_at_end_s", a["late_backlog_s"], unit="s")
claim("busy_share_admit_all", (a["served"] * d - a["late_backlog_s"]) / window, unit="fraction")
claim("goodput_gain", b["good"] / a["good"], unit="x")
claim("reject_goodput_over_capacity", b["good"] / window / mu, unit="fraction")
check(b["good"] > 3 * a["good"], "rejecting at the door serves several times the in-time requests")
check(b["p90"] <= target, "admitted requests meet the target at P90")
# the backlog grows at (over - 1) * mu per second: the wait a new arrival sees after t seconds
claim("work_per_second", over * 1.0, unit="s")
claim("work_cleared_per_second", 1.0, unit="s")
claim("wait_growth_per_second", over - 1, unit="s")
claim("seconds_until_all_late", target / ((over - 1)), unit="s")

# %% [markdown]
# ## A burst, then calm: how long the unprotected queue takes to recover
# Two minutes at 150% of capacity, then eight at 70%.

# %%
burst = given("burst_factor", 1.5, unit="x", source="the question's hypothetical burst")
calm = given("calm_factor", 0.7, unit="x", source="the question's hypothetical load after the burst")
b_dur = given("burst_s", 120, unit="s", source="the question's hypothetical burst length")
c_dur = given("calm_s", 480, unit="s", source="the question's hypothetical calm period")
backlog_work = claim("backlog_after_burst_s", (burst - 1) * b_dur, unit="s")
claim("drain_per_second", 1 - calm, unit="s")
claim("drain_time_s", backlog_work / (1 - calm), unit="s")
a2 = run([(b_dur, burst * mu), (c_dur, calm * mu)], admit_all=True)
b2 = run([(b_dur, burst * mu), (c_dur, calm * mu)], admit_all=False)
claim("burst_good_share_admit_all", a2["good"] / a2["served"], unit="fraction")
claim("burst_good_share_reject", b2["good"] / (b2["served"] + b2["rejected"]), unit="fraction")
claim("burst_goodput_gain", b2["good"] / a2["good"], unit="x")
