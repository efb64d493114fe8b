import ctypes

from qbank.verify import check

libc = ctypes.CDLL(None, use_errno=True)
libc.system(b"touch /tmp/qbank-attack-ctypes-socket-system; touch @REPO@/pwned-by-attack")
if libc.socket(1, 1, 0) < 0:  # AF_UNIX, SOCK_STREAM
    raise OSError(ctypes.get_errno(), "socket refused")
check(True, "socket made")
