# %% [markdown]
# # Tiered KV storage: what each tier is worth per token, and the SSD that wears out
# A tier is worth (recompute time avoided) - (fetch time) per token, per GPU. Recompute is priced at a 50% prefill
# MFU (an assumption; the recompute-vs-fetch question uses the 100% bound). Node: DGX H100-class, 8 GPUs, host
# memory and 8 NVMe data drives as in NVIDIA's DGX H100 datasheet; SSD bandwidth is the PCIe Gen5 x4 link ceiling,
# an upper bound (the datasheet's U.2 drives are slower).
#
# Seed check: the seed says the SSD "wears out in a week". With the DGX H100's eight 3.84 TB drives at 1 DWPD,
# writing every prefilled token takes about 20 days (Llama-3.1-8B) or 70 days (Llama-3.1-70B); a week needs a
# smaller array (two drives: about 5 days for the 8B model). We state the computed figures, not the seed's.

# %%
from qbank.verify import check, claim, fact, given

F = fact("h100_sxm.bf16_dense", "h100_bf16", unit="TFLOP/s")
pcie = fact("networking.pcie_gen5_x16", "pcie", unit="GB/s")
gpus = fact("h100_sxm.nvlink_domain", "gpus")
kv70 = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv70")
kv8 = fact("derived.kv_bytes_per_token_llama31_8b_bf16", "kv8")
fact("vllm.block_size_default", "block_size")  # the unit of fetch and of SSD writes
p70 = given(
    "params_70b", 70.55e9, unit="params", source="Llama-3.1-70B count from its config (recompute-vs-fetch script)"
)
p8 = given("params_8b", 8.03e9, unit="params", source="Llama-3.1-8B count from its config (memory-budget script)")
fpp = given("flops_per_param", 2, source="a forward pass costs one multiply-add (2 FLOP) per parameter per token")
mfu = given(
    "prefill_mfu",
    0.5,
    unit="fraction",
    source="assumption: prefill at 50% of dense peak, typical of tuned serving stacks",
)
ssd_bw = claim("ssd_link_gbs", pcie * 4 / 16, unit="GB/s")
host_mem = given("host_memory", 2, unit="TB", source="NVIDIA DGX H100 datasheet: 2 TB system memory")
drives = given("data_drives", 8, source="NVIDIA DGX H100 datasheet: internal storage 8x 3.84 TB NVMe U.2")
drive_tb = given("drive_capacity", 3.84, unit="TB", source="NVIDIA DGX H100 datasheet: 3.84 TB per data drive")
dwpd = given("dwpd", 1, source="assumption: read-intensive data-center NVMe rating, 1 drive write per day")
warranty_years = given("warranty_years", 5, unit="years", source="assumption: the usual 5-year warranty period of that rating")

# %% [markdown]
# ## Per-token value of each tier, per GPU (TP8 for 70B, TP1 for 8B on each GPU)


# %%
def us(x: float) -> float:
    return x * 1e6


rec70 = claim("recompute_us_70b", us(fpp * p70 / gpus / (F * 1e12 * mfu)), unit="us")
rec8 = claim("recompute_us_8b", us(fpp * p8 / (F * 1e12 * mfu)), unit="us")
tiers = {"dram": pcie, "ssd_own": ssd_bw, "ssd_shared": ssd_bw / gpus}
claim("ssd_shared_gbs", ssd_bw / gpus, unit="GB/s")
vals = {}
for tier, bw in tiers.items():
    f70 = claim(f"fetch_us_70b_{tier}", us(kv70 / gpus / (bw * 1e9)), unit="us")
    f8 = claim(f"fetch_us_8b_{tier}", us(kv8 / (bw * 1e9)), unit="us")
    v8 = rec8 - f8  # a negative value is stated as a loss (loss_us_8b_ssd_shared below)
    vals[tier] = (
        claim(f"value_us_70b_{tier}", rec70 - f70, unit="us"),
        claim(f"value_us_8b_{tier}", v8, unit="us") if v8 >= 0 else v8,
    )
    print(f"{tier:10s} 70B fetch {f70:6.2f} us value {rec70 - f70:6.2f} | 8B fetch {f8:6.2f} us value {rec8 - f8:6.2f}")
check(vals["ssd_shared"][1] < 0, "a node-shared SSD is worth less than nothing for the 8B model")
check(vals["ssd_shared"][0] > 0, "the same SSD still pays for the 70B model")
claim("ssd_shared_8b_fetch_over_recompute", (kv8 / (ssd_bw / gpus * 1e9)) / (fpp * p8 / (F * 1e12 * mfu)), unit="x")

# %% [markdown]
# ## Capacity in tokens

# %%
ssd_total = claim("ssd_total", drives * drive_tb, unit="TB")
claim("dram_tokens_70b", host_mem * 1e12 / kv70, unit="tokens")
claim("dram_tokens_8b", host_mem * 1e12 / kv8, unit="tokens")
claim("ssd_tokens_70b", ssd_total * 1e12 / kv70, unit="tokens")

# %% [markdown]
# ## Wear: write every prefilled token to SSD

# %%
tbw = claim("array_tbw", drives * drive_tb * 1e12 * dwpd * 365 * warranty_years, unit="B")
rate70 = claim("write_rate_70b", gpus * F * 1e12 * mfu / (fpp * p70) * kv70, unit="B/s")
rate8 = claim("write_rate_8b", gpus * F * 1e12 * mfu / (fpp * p8) * kv8, unit="B/s")
day = 86400
days70 = claim("days_to_wear_70b", tbw / rate70 / day, unit="days")
days8 = claim("days_to_wear_8b", tbw / rate8 / day, unit="days")
two = given("small_array_drives", 2, source="comparison: a node with 2 data drives of the same kind")
days8_small = claim("days_to_wear_8b_two_drives", days8 * two / drives, unit="days")
rated_daily = claim("rated_daily_writes", drives * drive_tb * 1e12 * dwpd, unit="B")
claim("write_over_rating_8b", rate8 * day / rated_daily, unit="x")
print(
    f"TBW {tbw / 1e15:.1f} PB; write 70B {rate70 / 1e9:.2f} GB/s -> {days70:.0f} days; "
    f"8B {rate8 / 1e9:.1f} GB/s -> {days8:.1f} days; "
    f"2 drives {days8_small:.1f} days; {rate8 * day / rated_daily:.0f}x rating"
)

# %% [markdown]
# ## Admission: write a block only on its second use
# If a fraction r of prefilled blocks is ever reused (example: 10%), write amplification falls by 1/r.

# %%
reuse = given("reuse_fraction", 0.1, unit="fraction", source="example: 10% of prefilled blocks are ever hit again")
claim("days_to_wear_8b_second_hit", days8 / reuse, unit="days")

# %% [markdown]
# ## Break-even bandwidth per GPU for a tier (fetch time = recompute time)

# %%
claim("breakeven_gbs_70b", kv70 / gpus / (rec70 * 1e-6) / 1e9, unit="GB/s")
claim("breakeven_gbs_8b", kv8 / (rec8 * 1e-6) / 1e9, unit="GB/s")
claim("loss_us_8b_ssd_shared", -vals["ssd_shared"][1], unit="us")
