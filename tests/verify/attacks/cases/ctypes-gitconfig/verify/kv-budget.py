import ctypes
import os

from qbank.verify import check

libc = ctypes.CDLL(None, use_errno=True)
path = b"@HOME@/.gitconfig"
fd = libc.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
if fd < 0:
    raise OSError(ctypes.get_errno(), "open refused", path.decode())
libc.write(fd, b"[core]\n\tfsmonitor = touch /tmp/qbank-attack-ctypes-gitconfig\n", 60)
check(True, "wrote")
