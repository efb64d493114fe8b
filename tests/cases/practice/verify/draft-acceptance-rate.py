# %%
from qbank.verify import check

alpha, gamma = 0.8, 4
expected_tokens = (1 - alpha ** (gamma + 1)) / (1 - alpha)
check(1 < expected_tokens < gamma + 1, "a draft of gamma tokens yields between 1 and gamma + 1 tokens per pass")
