# expect: outcome=error code=verify-network line=here
# %%
import socket

from qbank.verify import claim

PORT = 9  # tests replace this with a port they listen on
conn = socket.create_connection(("127.0.0.1", PORT), timeout=2)  # <- here
claim("connected", 1)
