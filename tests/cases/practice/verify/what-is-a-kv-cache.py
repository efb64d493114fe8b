# %%
from qbank.verify import check, given

kv_tensors = given("kv_tensors", 2, source="one key and one value vector per token")
check(kv_tensors == 2, "a key and a value per token")
